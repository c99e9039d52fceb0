"""BigCodeBench grader: the task's unittest via ``bigcodebench.eval.unsafe_execute``, in our sandbox.

Reused from ``bigcodebench==0.2.5`` (local execution only; its remote/e2b default is
never called): ``bigcodebench.eval.unsafe_execute`` (``safe_environment``,
``create_tempdir``, ``reliability_guard``, ``swallow_io``, ``time_limit``, loading and
running ``TestCases``; a sample passes when no test fails or errors), with BigCodeBench's
per-task limit ``TIMEOUT_LIMIT`` (240 s) by default (``Limits.timeout_s`` - 5). Its rlimits are not set
(``0``): the sandbox's ``Limits`` apply instead.

"Calibrated" = the task's ``code_prompt`` prefixed to the completion.

``reliability_guard`` imports matplotlib; without it BigCodeBench reports every sample
as a timeout. ``check_environment`` therefore fails loudly first: the needed modules must
import in the sandbox's interpreter, and a matplotlib canary task must pass.
"""

from __future__ import annotations

import json
import os
import secrets

from fpa.grading.code.bench import CodeBench
from fpa.io import read_jsonl
from fpa.sandbox import Limits, Sandbox

# BigCodeBench's own per-task limit is TIMEOUT_LIMIT = 240 s; the harness gets 5 s less.
LIMITS = Limits(timeout_s=245.0, cpu_s=245, memory_bytes=8 << 30, nproc=256, total_memory_bytes=8 << 30)
REQUIRED_MODULES = ("bigcodebench.eval", "matplotlib.pyplot", "numpy")

HARNESS = r"""
import json, sys, types
from bigcodebench.eval import _SUCCESS, _UNKNOWN, unsafe_execute

nonce, entry_point, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
code, test = open("solution.py").read(), open("test_code.py").read()
stat, details = types.SimpleNamespace(value=_UNKNOWN), {}
unsafe_execute(entry_point, code, test, timeout, 0, 0, 0, stat, details)
status = "pass" if stat.value == _SUCCESS and not details else "fail"
first = sorted(details)[0] if details else ""
sys.__stdout__.write("\n" + nonce + json.dumps({"status": status, "failed": sorted(details),
                                                "first": str(details.get(first, ""))[-400:]}) + "\n")
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


def solution_program(task: dict, completion: str) -> str:
    """Calibrated: ``code_prompt`` + completion, unless the completion already has the entry point."""
    if f"def {task['entry_point']}" in completion:
        return completion
    return task["code_prompt"] + completion


def gold_program(task: dict) -> str:
    return task["code_prompt"] + task["canonical_solution"]


def run_test(code: str, test: str, entry_point: str, sandbox: Sandbox, timeout_s: float | None = None) -> dict:
    timeout = timeout_s or sandbox.limits.timeout_s - 5
    nonce = secrets.token_hex(8)
    files = {"solution.py": code, "test_code.py": test}
    result = sandbox.run_python(HARNESS, args=[nonce, entry_point, str(timeout)], files=files,
                                env={"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    if result.timed_out:
        return {"status": "timeout", "failed": [], "first": ""}
    if result.memory_exceeded:  # the run's processes together went over Limits.total_memory_bytes
        return {"status": "memory_exceeded", "failed": [], "first": ""}
    lines = [line[len(nonce):] for line in result.stdout.splitlines() if line.startswith(nonce)]
    if result.returncode != 0 or not lines:
        return {"status": "harness_error", "failed": [], "first": result.stderr[-400:]}
    return json.loads(lines[-1])


def grade_one(task: dict, completion: str, sandbox: Sandbox) -> tuple[bool, str]:
    outcome = run_test(solution_program(task, completion), task["test"], task["entry_point"], sandbox)
    return outcome["status"] == "pass", f"bigcodebench_{outcome['status']}"


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
    outcome = run_test(CANARY["code"], CANARY["test"], CANARY["entry_point"], sandbox)
    if outcome["status"] != "pass":
        raise RuntimeError(f"bigcodebench: the canary task must pass, got {outcome}")


def default_sandbox() -> Sandbox:
    return Sandbox(LIMITS)


def grade_task(task: dict, completions: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    return [grade_one(task, completion, sandbox) for completion in completions]


GRADERS = (CodeBench("bigcodebench", task_file="bigcodebench", limits=LIMITS, load_tasks=load_tasks,
                     grade_task=grade_task, gold_program=gold_program, check_environment=check_environment),)
