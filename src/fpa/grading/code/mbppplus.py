"""MBPP+ and HumanEval+ graders: EvalPlus's own correctness check, run in our sandbox.

Reused from ``evalplus==0.3.1`` (nothing re-implemented):

- host: ``evalplus.data.mbpp.get_mbpp_plus`` / ``evalplus.data.humaneval.get_human_eval_plus``
  load the tasks (``MBPP_OVERRIDE_PATH`` / ``HUMANEVAL_OVERRIDE_PATH`` point them at the
  mirror file; ``get_mbpp_plus`` applies ``mbpp_deserialize_inputs``). Loading is JSON
  only; nothing from the tasks is executed on the host.
- sandbox: ``evalplus.gen.util.trusted_exec`` computes the expected outputs and
  reference times from ``prompt + canonical_solution`` (as ``evaluate.get_groundtruth``),
  then ``evalplus.eval.untrusted_check`` checks each candidate on the base, then the plus
  inputs, each in its own process (as ``evaluate.check_correctness``), with EvalPlus's
  per-input time limits, special oracles, ``atol`` and ``np.allclose`` comparison.
  Correct = both ``pass``. All completions of one task share one sandbox run, so the
  expected outputs are computed once per task and run.

The task (with tuple/complex inputs) goes into the sandbox as a host-made pickle (the
trusted direction); only a JSON verdict line comes back.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import secrets
from pathlib import Path

from fpa.grading.code.bench import CodeBench
from fpa.sandbox import Limits, Sandbox

DATASETS = {"mbppplus": "mbpp", "humanevalplus": "humaneval"}
# timeout_s bounds computing the expected outputs; each candidate adds its own budget.
LIMITS = Limits(timeout_s=120.0, cpu_s=120, memory_bytes=4 << 30)

HARNESS = r"""
import json, pickle, sys
from evalplus.eval import untrusted_check
from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS
from evalplus.gen.util import trusted_exec

nonce = sys.argv[1]
with open("task.pkl", "rb") as handle:
    dataset, task = pickle.load(handle)
with open("candidates.json") as handle:
    candidates = json.load(handle)
not_none = dataset == "mbpp" and task["entry_point"] in MBPP_OUTPUT_NOT_NONE_TASKS
oracle = {}
for split in ("base", "plus"):  # as evaluate.get_groundtruth, before any candidate code runs
    oracle[split] = trusted_exec(task["prompt"] + task["canonical_solution"], task[split + "_input"],
                                 task["entry_point"], record_time=True, output_not_none=not_none)
verdicts = []
for code in candidates:  # as evaluate.check_correctness: one untrusted_check (own process) per split
    verdict = {}
    for split in ("base", "plus"):
        expected, ref_time = oracle[split]
        verdict[split] = untrusted_check(dataset, code, task[split + "_input"], task["entry_point"],
                                         expected=expected, atol=task["atol"], ref_time=ref_time, fast_check=True)[0]
        if verdict[split] != "pass":
            break
    verdicts.append(verdict)
sys.__stdout__.write("\n" + nonce + json.dumps(verdicts) + "\n")
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


def solution_program(bench: str, task: dict, completion: str) -> str:
    """The program EvalPlus executes: MBPP+ completions are whole programs, HumanEval+
    completions continue the prompt unless they already define the entry point."""
    if bench == "humanevalplus" and f"def {task['entry_point']}" not in completion:
        return task["prompt"] + completion
    return completion


def gold_program(bench: str, task: dict) -> str:
    return task["prompt"] + task["canonical_solution"]


def grade_task(bench: str, task: dict, completions: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    """EvalPlus's check of every completion of one task, in one sandbox run; ``[(correct, rule)]``.

    The expected outputs are computed once per run; each candidate and split gets its own
    process (``untrusted_check``), as in EvalPlus.
    """
    nonce = secrets.token_hex(8)
    programs = [solution_program(bench, task, completion) for completion in completions]
    files = {"task.pkl": pickle.dumps((DATASETS[bench], task)), "candidates.json": json.dumps(programs)}
    # untrusted_check kills a candidate after min(60, sum of its limits) + 1 s per split.
    timeout = sandbox.limits.timeout_s + 2 * 62 * len(programs)
    env = {"EVALPLUS_MAX_MEMORY_BYTES": str(sandbox.limits.memory_bytes)}
    result = sandbox.run_python(HARNESS, args=[nonce], files=files, env=env, timeout_s=timeout)
    lines = [line[len(nonce):] for line in result.stdout.splitlines() if line.startswith(nonce)]
    if result.timed_out:
        return [(False, "evalplus_timeout")] * len(programs)
    if result.memory_exceeded:  # the run's processes together went over Limits.total_memory_bytes
        return [(False, "evalplus_memory_exceeded")] * len(programs)
    if result.returncode != 0 or not lines:
        return [(False, "evalplus_harness_error")] * len(programs)
    return [_verdict(verdict) for verdict in json.loads(lines[-1])]


def _verdict(verdict: dict) -> tuple[bool, str]:
    if verdict.get("base") != "pass":
        return False, f"evalplus_base_{verdict.get('base')}"
    if verdict.get("plus") != "pass":
        return False, f"evalplus_plus_{verdict.get('plus')}"
    return True, "evalplus_pass"


def default_sandbox() -> Sandbox:
    return Sandbox(LIMITS)


GRADERS = tuple(CodeBench(bench, task_file=bench, limits=LIMITS, load_tasks=functools.partial(load_tasks, bench),
                          grade_task=functools.partial(grade_task, bench),
                          gold_program=functools.partial(gold_program, bench)) for bench in DATASETS)
