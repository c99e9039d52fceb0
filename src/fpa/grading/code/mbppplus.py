"""MBPP+ and HumanEval+ (the EvalPlus family): EvalPlus's own check, with the verdict decided outside the sandbox.

The prompts: MBPP+'s statement with its example ``assert``; HumanEval+'s signature and docstring. The
program: an MBPP+ completion is whole; a HumanEval+ one is whole when it defines the entry point, else it
continues the prompt. Reused from ``evalplus==0.3.1``:

- host: ``evalplus.data.mbpp.get_mbpp_plus`` / ``evalplus.data.humaneval.get_human_eval_plus``
  load the tasks (``MBPP_OVERRIDE_PATH`` / ``HUMANEVAL_OVERRIDE_PATH`` point them at the
  mirror file; ``get_mbpp_plus`` applies ``mbpp_deserialize_inputs``). Loading is JSON
  only; nothing from the tasks is executed on the host.
- sandbox, run 1 (``GOLD``): ``evalplus.gen.util.trusted_exec`` computes the expected outputs
  and reference times from ``prompt + canonical_solution`` (as ``evaluate.get_groundtruth``,
  with ``MBPP_OUTPUT_NOT_NONE_TASKS``); they come back to the host as data.
- sandbox, run 2 (``CANDIDATES``): the inputs and the per-input time limits only. Each
  candidate runs, per split, in a process of its own, as in ``untrusted_check``:
  ``create_tempdir``, ``reliability_guard``, ``swallow_io`` and ``time_limit`` as in
  ``unsafe_execute``, which here sends each output back as data (``fpa.grading.code.values``)
  instead of comparing it. The harness's monitor process (``fpa.grading.code.monitor``)
  runs no candidate and alone writes the run's output.
- host: ``fpa.grading.code.evalplus_outputs.SplitCheck`` compares each output with EvalPlus's
  own rules as it arrives (the run's stdout is read as it comes), and at the first that fails
  tells the monitor, on the run's stdin, to stop that candidate's process, as ``fast_check``
  stops at the first failing input; the monitor goes on with the next in the same run.
  Correct = base and plus both ``pass``.

The sandbox runs import only EvalPlus's ``eval/utils.py`` and ``gen/util/__init__.py``,
loaded by file: ``evalplus.eval``'s ``__init__`` imports numpy and psutil, which the
comparison on the host needs and the sandbox runs do not. The candidates' monitor imports
once what ``reliability_guard`` and most solutions import, so that no forked candidate does. The task's inputs go
into the sandbox as a host-made pickle (the trusted direction); nothing is unpickled here.
One run grades every candidate of a task; when it fails (a timeout, the memory cap, a dead
harness), the candidate it was running takes that verdict and the ones after it are graded
in a new run, so one candidate's failure costs that candidate only.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import re
from pathlib import Path

from fpa.grading.code.bench import CodeBench, whole_program
from fpa.grading.code.encoder import ENCODER
from fpa.grading.code.extract import defines_function, preloaded
from fpa.grading.code.monitor import MONITOR, RecordStream, job_input, stop_command
from fpa.grading.code.values import loads
from fpa.samples.records import MathProblem
from fpa.samples.rows import read_records
from fpa.sandbox import Limits, RunResult, Sandbox

DATASETS = {"mbppplus": "mbpp", "humanevalplus": "humaneval"}
SPLITS = ("base", "plus")
# timeout_s bounds computing the expected outputs; the candidates' run has its own budget.
LIMITS = Limits(timeout_s=240.0, cpu_s=240, memory_bytes=4 << 30, output_bytes=256 << 20)
START_S = 10.0  # the candidates' run: the interpreter and the harness before the first candidate
# What EvalPlus's evaluating process has imported when it forks a candidate (evalplus.eval: numpy;
# evalplus.data: datasets, so pandas), which the candidate's own import then finds done: under
# reliability_guard (os.putenv is None) pandas cannot be imported any more. The candidates' run
# imports them before the guard as fpa.grading.code.extract.preloaded says.
PROCESS_MODULES = ("numpy", "pandas")
_DOCSTRING = re.compile(r'^\s*"""\s*\n?(.*?)\n?\s*"""\s*$', re.DOTALL)

_EVALPLUS_MODULES = r"""
import importlib.util, sys

def evalplus_module(name, relative):
    # one module of evalplus by its file, without running evalplus.eval's __init__ (numpy, psutil)
    root = importlib.util.find_spec("evalplus").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location(name, f"{root}/{relative}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module

utils = evalplus_module("evalplus.eval.utils", "eval/utils.py")
"""

GOLD = ENCODER + _EVALPLUS_MODULES + r"""
import json, pickle
trusted_exec = evalplus_module("evalplus.gen.util", "gen/util/__init__.py").trusted_exec
job = pickle.loads(sys.stdin.buffer.read())
for split, inputs in job["inputs"].items():  # as evaluate.get_groundtruth; the outputs as a candidate sends them
    outputs, ref_time = trusted_exec(job["code"], inputs, job["entry_point"], record_time=True,
                                     output_not_none=job["not_none"])
    sys.stdout.write(json.dumps([split, ref_time, len(outputs)]) + "\n")
    sys.stdout.writelines('["value", ' + encode(out) + "]\n" for out in outputs)
"""

CANDIDATES = ENCODER + MONITOR + _EVALPLUS_MODULES + r"""
import json, os, pickle, shutil
job = pickle.loads(read_job())
isolate_monitor()
RUN_DIR = sys.path[0]  # the run's work dir, where main.py is: every candidate can write there
# loaded once here rather than in each child: what reliability_guard and most solutions import
import bisect, collections, copy, datetime, functools, heapq, itertools, math, operator, platform, random, re, resource
import string, subprocess, typing
platform.uname()
for name in job["preload"]:  # what EvalPlus's own process has imported before the guard (PROCESS_MODULES)
    __import__(name)

def execute(code, inputs, limits):
    def target(send):  # evalplus.eval.unsafe_execute, each output sent back instead of compared
        with utils.create_tempdir() as own_dir:  # a fresh directory, in place of the run's on its import path:
            sys.path[:] = [own_dir if path == RUN_DIR else path for path in sys.path]  # what it writes is its own
            rmtree, rmdir, chdir = shutil.rmtree, os.rmdir, os.chdir  # needed when cleaning up the tempdir
            utils.reliability_guard(maximum_memory_bytes=job["max_memory_bytes"])
            try:
                namespace = {}
                with utils.swallow_io():
                    exec(code, namespace)
                    fn = namespace[job["entry_point"]]
                for index, inp in enumerate(inputs):
                    with utils.time_limit(limits[index]):
                        with utils.swallow_io():
                            out = fn(*inp)
                    try:
                        send('["value", ' + encode(out) + "]")
                    except Unserializable as error:
                        send(_dumps(["opaque", str(error)]))
                        if job["opaque_fails"]:
                            break  # no comparison passes it: stop, as fast_check does at a failure
                else:
                    send('["done"]')
            except BaseException as error:
                send(_dumps(["raised", type(error).__name__]))
            shutil.rmtree, os.rmdir, os.chdir = rmtree, rmdir, chdir
    return target

for index, code in enumerate(job["programs"]):
    for split in job["splits"]:
        end, last = run_child(execute(code, split["inputs"], split["time_limits"]), split["deadline_s"],
                              split["cap"], job["sweep"], {"program": index, "split": split["name"]})
        if end != "exited" or last != '["done"]':
            break  # this split failed whatever it returned (or the host stopped it); as with fast_check, plus is not run
"""


def load_tasks(bench: str, path: str | os.PathLike) -> dict[str, dict]:
    """EvalPlus's loader on the mirror file ``path``: task_id -> task."""
    if bench not in DATASETS:
        raise ValueError(f"bench: expected one of {sorted(DATASETS)}, got {bench!r}")
    return dict(_load_tasks(bench, str(Path(path).resolve())))


@functools.lru_cache(maxsize=4)
def _load_tasks(bench: str, path: str) -> tuple:
    if bench == "mbppplus":
        import evalplus.data.mbpp as module  # the env var is read at import; set the global too

        module.MBPP_OVERRIDE_PATH = path
        tasks = module.get_mbpp_plus(err_incomplete=True)
    else:
        import evalplus.data.humaneval as module

        module.HUMANEVAL_OVERRIDE_PATH = path
        tasks = module.get_human_eval_plus(err_incomplete=True)
    return tuple(tasks.items())


def load_mbppplus_problems(path: str | os.PathLike, source: str = "mbppplus") -> list[MathProblem]:
    """MBPP+'s ``prompt`` without its docstring quotes: the statement and one example ``assert``, which names
    the function."""
    problems = []
    for row in read_records(path, {"task_id": str, "prompt": str}):
        match = _DOCSTRING.match(row["prompt"])
        statement = match.group(1).strip() if match else row["prompt"].strip()
        problems.append(MathProblem(row["task_id"], statement, row["task_id"], source))
    return problems


def load_humanevalplus_problems(path: str | os.PathLike, source: str = "humanevalplus") -> list[MathProblem]:
    """"Complete the following Python function" and HumanEval+'s ``prompt`` (signature and docstring) in a
    code block."""
    return [MathProblem(row["task_id"], "Complete the following Python function.\n```python\n"
                        f"{row['prompt'].rstrip()}\n```", row["task_id"], source)
            for row in read_records(path, {"task_id": str, "prompt": str})]


def humanevalplus_program(task: dict, code: str) -> str:
    """Whole when it defines the entry point at its top level (read by parsing it), else it continues the
    prompt (EvalPlus's ``prompt + completion``)."""
    return code if defines_function(code, task["entry_point"]) else task["prompt"] + code


def gold_program(bench: str, task: dict) -> str:
    return task["prompt"] + task["canonical_solution"]


def grade_task(bench: str, task: dict, programs: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    """EvalPlus's check of every program of one task; ``[(correct, rule)]``. The expected
    outputs come from one sandbox run, the candidates' outputs from another (or more, after a
    failed run), and the verdicts from ``split_status`` here."""
    expected, failure = expected_outputs(bench, task, sandbox)
    if failure:
        return [(False, failure)] * len(programs)
    # a candidate's outputs may take twice the canonical's text (ints as floats) and 1 MiB more; a run
    # takes as many candidates as the sandbox's output holds (HumanEval/130's: 124 MB, one per run)
    caps = {split: 2 * sum(map(len, found.lines)) + (1 << 20) for split, found in expected.items()}
    per_run = max(1, sandbox.limits.output_bytes // sum(caps.values()))
    verdicts: list[tuple[bool, str]] = []
    while len(verdicts) < len(programs):
        batch = programs[len(verdicts): len(verdicts) + per_run]
        verdicts += _grade_run(bench, task, batch, expected, caps, sandbox)
    return verdicts


def expected_outputs(bench: str, task: dict, sandbox: Sandbox) -> tuple[dict | None, str | None]:
    """``({split: Expected}, None)`` from the canonical solution, or ``(None, rule)``."""
    job = {"task_id": task["task_id"], "code": gold_program(bench, task), "entry_point": task["entry_point"],
           "inputs": {split: task[f"{split}_input"] for split in SPLITS},
           "not_none": DATASETS[bench] == "mbpp" and task["entry_point"] in _evalplus().MBPP_OUTPUT_NOT_NONE_TASKS}
    result = sandbox.run_python(GOLD, stdin=pickle.dumps(job))
    lines, expected = result.stdout.split("\n")[:-1] if result.ok else [], {}
    while lines:
        split, ref_time, count = json.loads(lines[0])
        outputs = [loads(line)[1] for line in lines[1: 1 + count]]
        expected[split], lines = _evalplus().Expected(lines[1: 1 + count], outputs, ref_time), lines[1 + count:]
    if list(expected) != list(SPLITS) or any(len(expected[split].outputs) != len(task[f"{split}_input"])
                                             for split in SPLITS):  # fmt: skip
        return None, _run_failure(result)
    return expected, None


def _grade_run(bench: str, task: dict, programs: list[str], expected: dict, caps: dict,
               sandbox: Sandbox) -> list[tuple[bool, str]]:  # fmt: skip
    """Verdicts of the programs one run finished, in order, and of the one it was running when it
    failed, if it did (the run's reason); the rest are left to the next run."""
    records, result = candidate_records(bench, task, programs, expected, caps, sandbox)
    verdicts = []
    for index in range(len(programs)):
        verdict = _verdict([records.get((index, split)) for split in SPLITS])
        verdicts.append(verdict or (False, _run_failure(result)))
        if verdict is None:
            break
    return verdicts


def candidate_records(bench: str, task: dict, programs: list[str], expected: dict, caps: dict,
                      sandbox: Sandbox) -> tuple[dict, RunResult]:  # fmt: skip
    """One run of ``CANDIDATES``: ``{(program index, split): (lines sent, how the process ended, status)}``.
    Each line is compared as it comes (``SplitCheck``); at the first that fails its split, the
    host tells the monitor to stop that process, as ``fast_check`` stops at a failing input."""
    splits = [{"name": split, "inputs": task[f"{split}_input"], "time_limits": _evalplus().time_limits(expected[split].ref_time),
               "cap": caps[split]} for split in SPLITS]  # fmt: skip
    for split in splits:
        split["deadline_s"] = _evalplus().process_deadline_s(split["time_limits"])
    memory = min(sandbox.limits.memory_bytes, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    job = {"task_id": task["task_id"], "entry_point": task["entry_point"], "programs": programs, "splits": splits,
           "max_memory_bytes": memory, "sweep": sandbox.mode == "bwrap",
           "preload": preloaded(PROCESS_MODULES, programs),
           "opaque_fails": _evalplus().opaque_fails(DATASETS[bench], task["entry_point"])}  # fmt: skip
    checks = {}

    def check_line(header: dict, line: str) -> bytes | None:
        key = header["program"], header["split"]
        if key not in checks:
            checks[key] = _split_check(bench, task, expected, key[1])
        return stop_command(header) if checks[key].add(line) else None

    stream = RecordStream(check_line)
    timeout = START_S + len(programs) * sum(split["deadline_s"] + 1 for split in splits)
    result = sandbox.run_python(CANDIDATES, stdin=job_input(pickle.dumps(job)), timeout_s=timeout, on_stdout=stream.feed)
    records = {}
    for header, lines in stream.records:
        key = header["program"], header["split"]
        check = checks.get(key) or _split_check(bench, task, expected, key[1])
        records[key] = (lines, header["end"], check.status(header["end"]))
    return records, result


def _split_check(bench: str, task: dict, expected: dict, split: str):
    return _evalplus().SplitCheck(DATASETS[bench], task["entry_point"], task[f"{split}_input"], expected[split],
                                  task["atol"])  # fmt: skip


def _verdict(records: list[tuple | None]) -> tuple[bool, str] | None:
    """Base, then plus, as ``evaluate.check_correctness``; None when a record it needs is missing."""
    for split, record in zip(SPLITS, records):
        if record is None:
            return None
        status = record[2]
        if status != _evalplus().PASS:
            return False, f"evalplus_{split}_{status}"
    return True, "evalplus_pass"


def _run_failure(result: RunResult) -> str:
    return f"evalplus_{result.failure('harness_error')}"


def _bench(bench: str, load_problems, program) -> CodeBench:
    return CodeBench(bench, task_file=bench, limits=LIMITS, load_tasks=functools.partial(load_tasks, bench),
                     load_problems=load_problems, program=program, grade_task=functools.partial(grade_task, bench),
                     gold_program=functools.partial(gold_program, bench))


# one family: a record per benchmark, since a config names each as its grader
GRADERS = (_bench("mbppplus", load_mbppplus_problems, whole_program),
           _bench("humanevalplus", load_humanevalplus_problems, humanevalplus_program))


def _evalplus():
    """EvalPlus's rules (``fpa.grading.code.evalplus_outputs``), imported on first grading: planning loads
    the grader registry, which must not import a harness package (tests/test_registries.py)."""
    from fpa.grading.code import evalplus_outputs

    return evalplus_outputs
