"""BigCodeBench: the task's unittest via ``bigcodebench.eval.unsafe_execute``, in our sandbox.

The prompts: BigCodeBench's ``instruct_prompt``. The program: calibrated (below).

Reused from ``bigcodebench==0.2.5`` (local execution only; its remote/e2b default is
never called): ``bigcodebench.eval.unsafe_execute`` (``safe_environment``,
``create_tempdir``, ``reliability_guard``, ``swallow_io``, ``time_limit``, loading and
running ``TestCases``; a sample passes when no test fails or errors), with BigCodeBench's
per-task limit ``TIMEOUT_LIMIT`` (240 s) by default (``Limits.timeout_s`` - 5). Its rlimits are not set
(``0``): the sandbox's ``Limits`` apply instead.

"Calibrated" = the task's ``code_prompt`` and ``pass`` prefixed to the completion, as ``bigcodebench.evaluate``.

The program and the tests share one process (BigCodeBench compiles them into one module),
so the verdict cannot be moved out of it as for the other benchmarks. What the harness
does instead (docs/code_eval.md lists what a program can still forge):

- The program and the test code come on stdin: no test file on disk, no nonce in argv.
- The harness's monitor (``fpa.grading.code.monitor``) runs the tests in a child and alone
  writes the run's output, so no line the program prints or forges reaches the host.
- The child reports each test's outcome as it ends (``ReportingResult``, the
  ``unittest.TestResult`` that ``unsafe_execute`` makes), then BigCodeBench's own verdict.
  A test counts as passed only with its own success report, and every test method the
  test code declares (read here with ``ast``) must have one: exiting early (``os._exit``,
  a killed child), skipping tests or raising ``SkipTest`` (no BigCodeBench test skips)
  leaves them missing.
- Before the program is imported the child takes the identity of every attribute of
  unittest's classes and modules, of its ``ReportingResult`` and of ``builtins``; a
  replaced, removed (or, in unittest, added) one is reported as tampering: at the end for
  all of them, and at each test's end for unittest and the test class's methods, the
  test's and the result's instance attributes that shadow their methods, and builtins
  against the test's start.

``reliability_guard`` imports matplotlib; without it BigCodeBench reports every sample
as a timeout. ``check_environment`` therefore fails loudly first: the needed modules must
import in the sandbox's interpreter, and a matplotlib canary task must pass.
"""

from __future__ import annotations

import ast
import json
import os

from fpa.grading.code.bench import CodeBench
from fpa.grading.code.monitor import MONITOR, read_records
from fpa.io import read_jsonl
from fpa.samples import rows
from fpa.samples.records import MathProblem
from fpa.sandbox import Limits, Sandbox

# BigCodeBench's own per-task limit is TIMEOUT_LIMIT = 240 s; the harness gets 5 s less.
LIMITS = Limits(timeout_s=245.0, cpu_s=245, memory_bytes=8 << 30, nproc=256, total_memory_bytes=8 << 30)
REQUIRED_MODULES = ("bigcodebench.eval", "matplotlib.pyplot", "numpy")
REPORT_BYTES = 4 << 20  # the child's test reports; a test's error text is cut to its last 400 characters

HARNESS = MONITOR + r"""
job = _json.loads(_sys.stdin.read())
isolate_monitor()

def run_tests(send):
    import builtins, types, unittest, unittest.case, unittest.loader, unittest.result, unittest.suite
    from bigcodebench.eval import _SUCCESS, _UNKNOWN, unsafe_execute
    dumps = _json.dumps
    def report(kind, test, detail=""):  # each report first checks the test's class and the modules
        for name in rebuilt(type(test)) + replaced_modules():
            send(dumps(["tampered", test.id(), name]))
        send(dumps([kind, test.id(), str(detail)[-400:]]))

    class ReportingResult(unittest.TestResult):
        def startTest(self, test):
            super().startTest(test)
            self._started = (watch(builtins), watch(*suite_classes(test)), set(vars(test)), set(vars(self)))
        def addSuccess(self, test):
            super().addSuccess(test)
            report("pass", test)
        def addSkip(self, test, reason):  # no BigCodeBench test skips; a program can, by raising SkipTest
            super().addSkip(test, reason)
            report("skip", test, reason)
        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            report("pass", test)
        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            report("pass", test)
        def addFailure(self, test, err):
            super().addFailure(test, err)
            report("fail", test, self.failures[-1][1])
        def addError(self, test, err):
            super().addError(test, err)
            report("fail", test, self.errors[-1][1])
        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                report("fail", test, err[1])
        def stopTest(self, test):
            for name in self.tampered(test):
                report("tampered", test, name)
            super().stopTest(test)
        def tampered(self, test):
            builtins_then, classes_then, test_then, result_then = self._started
            shadows = [name for name in set(vars(test)) - test_then
                       if hasattr(unittest.TestCase, name) and callable(vars(test)[name])]
            shadows += [name for name in set(vars(self)) - result_then
                        if hasattr(ReportingResult, name) and callable(vars(self)[name])]
            return (changed(strict, watch(*strict_owners)) + changed(builtins_then, watch(builtins))
                    + changed(classes_then, watch(*suite_classes(test))) + sorted(shadows))

    def rebuilt(cls):  # the test class as the test code alone builds it: a real TestCase, the same functions
        if unittest.TestCase not in cls.__mro__ or cls.__mro__[0].__name__ != "TestCases":
            return ["TestCases: not a unittest.TestCase"]
        own = {name: value.__func__ if type(value) in (classmethod, staticmethod) else value
               for name, value in vars(cls).items() if isinstance(value, (types.FunctionType, classmethod, staticmethod))}
        own = {name: getattr(unwrapped(function), "__code__", None) for name, function in own.items()}
        if any(name not in declared or code != declared[name] for name, code in own.items()) or not {
                name for name in declared if name.startswith("test")} <= own.keys():
            return ["TestCases: not the class the test code defines"]
        return []
    def unwrapped(function):  # under its decorators (mock.patch and functools.wraps keep __wrapped__)
        while isinstance(function, types.FunctionType) and isinstance(vars(function).get("__wrapped__"), types.FunctionType):
            function = vars(function)["__wrapped__"]
        return function
    def replaced_modules():
        return [f"sys.modules[{name!r}]" for name, module in modules_then.items() if _sys.modules.get(name) is not module]
    def declared_functions(full_code):  # {name: code} of class TestCases's functions, compiled here as unsafe_execute
        try:                              # compiles them (the program's imports change the bytecode), before it runs
            module = compile(full_code, "__test__.py", "exec")
        except (SyntaxError, ValueError):
            return {}
        body = next((const for const in module.co_consts if isinstance(const, types.CodeType) and const.co_name == "TestCases"), None)
        return {const.co_name: const for const in (body.co_consts if body else ()) if isinstance(const, types.CodeType)}
    def suite_classes(test):  # the test class and its own bases, not unittest's
        return [cls for cls in type(test).__mro__ if cls.__module__ == "__test__"]
    def watch(*owners):  # the identity of each owner's callables (and of a function's code)
        return {(owner.__name__, name): (value, value.__code__ if isinstance(value, types.FunctionType) else None)
                for owner in owners for name, value in list(vars(owner).items())
                if (callable(value) or isinstance(value, (staticmethod, classmethod, property)))
                and not (owner is builtins and name in ("exit", "quit"))}  # reliability_guard sets both
    def changed(before, after):
        gone = [key for key, (value, code) in before.items()
                if key not in after or after[key][0] is not value or after[key][1] is not code]
        added = [key for key, (value, _) in after.items() if key not in before and key[0] != "builtins"
                 and not isinstance(value, types.ModuleType) and key[1] != "IsolatedAsyncioTestCase"]  # lazy imports
        return [".".join(key) for key in gone + added]

    unittest.TestResult = ReportingResult  # unsafe_execute makes its result as unittest.TestResult()
    strict_owners = [unittest, unittest.case, unittest.loader, unittest.result, unittest.suite, unittest.TestCase,
                     unittest.case._Outcome, unittest.result.TestResult, ReportingResult, unittest.suite.TestSuite,
                     unittest.suite.BaseTestSuite, unittest.loader.TestLoader]
    strict, baseline = watch(*strict_owners), watch(builtins)
    declared, modules_then = declared_functions(job["code"] + "\n" + job["test"]), dict(_sys.modules)
    stat, details = types.SimpleNamespace(value=_UNKNOWN), {}
    unsafe_execute(job["entry_point"], job["code"], job["test"], job["timeout"], 0, 0, 0, stat, details)
    tampered = changed(strict, watch(*strict_owners)) + changed(baseline, watch(builtins)) + replaced_modules()
    first = str(details[sorted(details)[0]])[-400:] if details else ""
    send(dumps(["done", stat.value == _SUCCESS and not details, tampered, first]))

run_child(run_tests, job["timeout"] + 2, job["report_bytes"], False, {})
"""

CANARY = {
    "task_id": "fpa/canary",
    "entry_point": "task_func",
    "code": "import matplotlib.pyplot as plt\ndef task_func(values):\n    fig, ax = plt.subplots()\n"
    "    ax.plot(values)\n    return ax\n",
    "test": "import unittest\nclass TestCases(unittest.TestCase):\n    def test_plot(self):\n"
    "        ax = task_func([1, 2, 3])\n        self.assertEqual(len(ax.lines), 1)\n",
}


def load_tasks(path: str | os.PathLike) -> dict[str, dict]:
    """BigCodeBench HF-format JSONL(.gz): task_id -> record."""
    return {record["task_id"]: record for record in read_jsonl(path)}


def load_problems(path: str | os.PathLike, source: str = "bigcodebench") -> list[MathProblem]:
    """BigCodeBench's ``instruct_prompt`` (it ends with "You should write self-contained code starting with:
    ```<code_prompt>```"); graded calibrated."""
    return [MathProblem(row["task_id"], row["instruct_prompt"].strip(), row["task_id"], source)
            for row in rows.read_records(path, {"task_id": str, "instruct_prompt": str})]


def solution_program(task: dict, code: str) -> str:
    """Calibrated, as ``bigcodebench.evaluate``: the task's ``code_prompt``, an indented ``pass`` line, then the
    completion, whether it is a whole program (its own ``def`` of the entry point follows) or the function's body."""
    return task["code_prompt"] + "\n    pass\n" + code


def gold_program(task: dict) -> str:
    return task["code_prompt"] + task["canonical_solution"]


def run_test(code: str, test: str, entry_point: str, sandbox: Sandbox, timeout_s: float | None = None) -> dict:
    """``{"status", "failed", "first"}``: status "pass", "fail", "timeout", "memory_exceeded",
    "harness_error", "tampered" or "incomplete" (a declared test never reported passing)."""
    job = {"code": code, "test": test, "entry_point": entry_point, "timeout": timeout_s or sandbox.limits.timeout_s - 5,
           "report_bytes": REPORT_BYTES}  # fmt: skip
    result = sandbox.run_python(HARNESS, stdin=json.dumps(job), env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    if result.timed_out or result.memory_exceeded:
        return {"status": result.failure(""), "failed": [], "first": ""}
    records = read_records(result.stdout) if result.returncode == 0 else []
    if not records:
        return {"status": "harness_error", "failed": [], "first": result.stderr[-400:]}
    header, lines = records[-1]
    return outcome(header["end"], lines, declared_tests(test))


def outcome(end: str, lines: list[str], declared: set[str]) -> dict:
    """The verdict from the child's reports (``end``: how the child ended, ``fpa.grading.code.monitor``)."""
    if end == "timeout":
        return {"status": "timeout", "failed": [], "first": ""}
    try:
        events = [json.loads(line) for line in lines]
        done = events.pop() if events and events[-1][0] == "done" else None
        events = [(str(kind), str(test_id), str(detail)) for kind, test_id, detail in events]
        if done is not None:
            done = [bool(done[1]), [str(name) for name in done[2]], str(done[3])]
    except (ValueError, TypeError, IndexError, KeyError):  # a report the harness cannot have sent
        return {"status": "incomplete", "failed": [], "first": "unreadable test reports"}
    kinds = {kind for kind, _, _ in events}
    failed = sorted({test_id.split(".")[-1] for kind, test_id, _ in events if kind == "fail"})
    first = next((detail for kind, _, detail in events if kind != "pass"), done[2] if done else "")
    passed = {test_id.split(".")[-1] for kind, test_id, _ in events if kind == "pass"}
    if "tampered" in kinds or (done and done[1]):
        status = "tampered"
        first = ", ".join([detail for kind, _, detail in events if kind == "tampered"] + (done[1] if done else []))
    elif done is None:
        status, first = "incomplete", "the tests stopped before reporting their end"
    elif failed or not done[0]:
        status = "fail"
    elif not passed or not declared <= passed:
        status, first = "incomplete", f"tests not reported passing: {sorted(declared - passed) or 'all'}"
    else:
        status = "pass"
    return {"status": status, "failed": failed, "first": str(first)[-400:]}


def declared_tests(test_code: str) -> set[str]:
    """The test methods of ``class TestCases`` in the test code (read here, not run)."""
    try:
        tree = ast.parse(test_code)
    except SyntaxError:
        return set()
    return {node.name for cls in tree.body if isinstance(cls, ast.ClassDef) and cls.name == "TestCases"
            for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name.startswith("test")}  # fmt: skip


def grade_one(task: dict, program: str, sandbox: Sandbox) -> tuple[bool, str]:
    result = run_test(program, task["test"], task["entry_point"], sandbox)
    return result["status"] == "pass", f"bigcodebench_{result['status']}"


def check_environment(sandbox: Sandbox, modules=REQUIRED_MODULES) -> None:
    """Raise ``RuntimeError`` unless ``modules`` import in the sandbox and the canary passes."""
    probe = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    result = sandbox.run_python(probe, args=list(modules))
    if result.returncode != 0:
        raise RuntimeError(
            f"bigcodebench: modules {list(modules)} must import in {sandbox.python} (BigCodeBench reports "
            f"every sample as a timeout without matplotlib); install envs/eval_code.yaml. "
            f"{result.stderr.strip().splitlines()[-1:]}"
        )
    result = run_test(CANARY["code"], CANARY["test"], CANARY["entry_point"], sandbox)
    if result["status"] != "pass":
        raise RuntimeError(f"bigcodebench: the canary task must pass, got {result}")


def grade_task(task: dict, programs: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    return [grade_one(task, program, sandbox) for program in programs]


GRADERS = (CodeBench("bigcodebench", task_file="bigcodebench", limits=LIMITS, load_tasks=load_tasks,
                     load_problems=load_problems, program=solution_program, grade_task=grade_task,
                     gold_program=gold_program, check_environment=check_environment),)
