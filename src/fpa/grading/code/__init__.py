"""Code graders: MBPP+ / HumanEval+ (EvalPlus), BigCodeBench, LiveCodeBench v6.

Every program runs in ``fpa.sandbox``; see docs/code_eval.md for what is reused from
each upstream grader. ``grade_code_many(bench, pairs)`` takes ``(completion, task_id)``
pairs and returns ``(correct, rule)`` per pair, like the math graders; Pass@1 is
``fpa.evaluation.metrics.pass_at_1`` over the resulting 0/1 matrix.
"""

from __future__ import annotations

import functools
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from fpa.grading.code import bigcodebench, livecodebench, mbppplus
from fpa.progress import map_in_pool
from fpa.sandbox import Sandbox

# Mirror-relative default files (config/benchmarks.yaml, section ``code``).
MIRROR_PATHS = {
    "mbppplus": "mbppplus/MbppPlus-v0.2.0.jsonl",
    "humanevalplus": "humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz",
    "bigcodebench": "bigcodebench/BigCodeBench-hf-2024-06-18.jsonl.gz",
}
BENCHES = ("mbppplus", "humanevalplus", "bigcodebench", "livecodebench")
# Canonical solutions that do not pass, with the reason (figures: docs/code_eval.md).
KNOWN_EXCEPTIONS = {
    "HumanEval/32": "evalplus 0.3.1: the find_zero special oracle `continue`s before counting the input as done, "
    "so untrusted_check fails every solution, the canonical one included",
    "Mbpp/599": "load-sensitive: the plus inputs take ~100 s; under load the canonical exceeds EvalPlus's "
    "per-task cap min(60 s, 4x reference time) + 1 s and is reported as a timeout",
    "BigCodeBench/9": "imports seaborn, which envs/eval_code.yaml installs but the CI test env does not",
    # Upstream: bigcodebench.eval.safe_environment swaps os.kill for a safe_kill that spares only the
    # pids of its own Popen calls, so Pool.terminate() (the `with Pool()` exit) cannot kill the pool's
    # workers and may wait on them until the 240 s limit; also seen with no sandbox.
    "BigCodeBench/205": "bigcodebench 0.2.5's safe_environment blocks os.kill of multiprocessing.Pool workers; "
    "the Pool exit can hang until the time limit (flaky, also without the sandbox)",
    "BigCodeBench/363": "bigcodebench 0.2.5's safe_environment blocks os.kill of multiprocessing.Pool workers; "
    "the Pool exit can hang until the time limit (flaky)",
}
#: A program with a lone surrogate cannot be written as UTF-8; every upstream harness fails it too
#: (Python's ``compile`` refuses it), so it is graded here without a run instead of raising.
NOT_UTF8 = (False, "code_not_utf8")
_FENCE = re.compile(r"```(?:python|py|Python3?)?[ \t]*\n(.*?)```", re.DOTALL)

__all__ = ["BENCHES", "MIRROR_PATHS", "NOT_UTF8", "default_mirror", "extract_code", "gold_selfcheck_code",
           "grade_bigcodebench_many", "grade_code_many", "grade_humanevalplus_many", "grade_livecodebench_many",
           "grade_mbppplus_many", "is_utf8", "load_tasks", "make_sandbox"]


def default_mirror() -> Path:
    """$FPA_DATA_MIRROR, else ``shared/data`` beside the repository."""
    return Path(os.environ.get("FPA_DATA_MIRROR", Path(__file__).resolve().parents[4].parent / "shared" / "data"))


def extract_code(text: str) -> str:
    """The last fenced code block of a model answer, or the text itself when it has none."""
    blocks = _FENCE.findall(text)
    return blocks[-1] if blocks else text


def is_utf8(code: str) -> bool:
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_bench(bench: str) -> None:
    if bench not in BENCHES:
        raise ValueError(f"bench: expected one of {list(BENCHES)}, got {bench!r}")


def load_tasks(bench: str, data_path: str | os.PathLike) -> dict[str, dict]:
    _check_bench(bench)
    if bench in mbppplus.DATASETS:
        return mbppplus.load_tasks(bench, data_path)
    if bench == "bigcodebench":
        return bigcodebench.load_tasks(data_path)
    return livecodebench.load_problems(data_path)


SANDBOX_ENV = "FPA_SANDBOX"


def sandbox_mode() -> str:
    """``bwrap``, unless the user explicitly opts out with ``FPA_SANDBOX=none`` (then the
    pipeline runs model-generated code UNSANDBOXED, warns, and records it with each result)."""
    mode = os.environ.get(SANDBOX_ENV, "bwrap")
    if mode not in ("bwrap", "none"):
        raise ValueError(f"environment variable {SANDBOX_ENV}: expected 'bwrap' or 'none', got {mode!r}")
    return mode


@functools.lru_cache(maxsize=None)
def make_sandbox(bench: str, mode: str | None = None) -> Sandbox:
    """One sandbox per bench and process, with the bench's limits (BigCodeBench: checked first)."""
    _check_bench(bench)
    mode = mode or sandbox_mode()
    limits = {"bigcodebench": bigcodebench.LIMITS, "livecodebench": livecodebench.LIMITS}.get(bench, mbppplus.LIMITS)
    sandbox = Sandbox(limits, mode=mode)
    if bench == "bigcodebench":
        bigcodebench.check_environment(sandbox)  # fails loudly instead of all-timeout results
    return sandbox


def _grade_task(bench: str, task: dict, codes: list[str], sandbox: Sandbox) -> list[tuple[bool, str]]:
    """Every completion of one task; EvalPlus benches share one sandbox run per task."""
    if bench in mbppplus.DATASETS:
        return mbppplus.grade_task(bench, task, codes, sandbox)
    if bench == "bigcodebench":
        return [bigcodebench.grade_one(task, code, sandbox) for code in codes]
    tests = livecodebench.all_tests(task, sandbox)
    return [livecodebench.grade_one(task, code, sandbox, tests=tests) for code in codes]


def grade_code_many(
    bench: str,
    pairs: Sequence[tuple[str, str]],
    *,
    data_path: str | os.PathLike | None = None,
    tasks: dict[str, dict] | None = None,
    workers: int = 2,
    sandbox: Sandbox | None = None,
) -> list[tuple[bool, str]]:
    """Grade ``(completion, task_id)`` pairs; ``[(correct, rule)]`` in input order.

    Tasks come from ``tasks``, else ``data_path``, else the mirror file of ``bench``
    (LiveCodeBench is not in the mirror: pass ``data_path``). Completions go through
    ``extract_code``; a program that is not UTF-8 is ``NOT_UTF8`` without a run. Pairs are
    grouped by task; ``workers`` threads grade the groups, and each run is its own sandboxed process.
    """
    _check_bench(bench)
    if tasks is None:
        if data_path is None:
            if bench not in MIRROR_PATHS:
                raise ValueError(f"{bench}: not in the data mirror; pass data_path (see config/benchmarks.yaml code:)")
            data_path = default_mirror() / MIRROR_PATHS[bench]
        tasks = load_tasks(bench, data_path)
    unknown = sorted({task_id for _, task_id in pairs} - set(tasks))
    if unknown:
        raise ValueError(f"{bench}: unknown task ids {unknown[:5]} ({len(unknown)} in all)")
    sandbox = sandbox or make_sandbox(bench)
    groups: dict[str, list[int]] = {}
    for index, (_, task_id) in enumerate(pairs):
        groups.setdefault(task_id, []).append(index)
    verdicts: list[tuple[bool, str]] = [(False, "not_graded")] * len(pairs)

    def grade_group(task_id: str) -> None:
        codes = {index: extract_code(pairs[index][0]) for index in groups[task_id]}
        runnable = [index for index, code in codes.items() if is_utf8(code)]
        for index in codes.keys() - set(runnable):
            verdicts[index] = NOT_UTF8
        if runnable:
            graded = _grade_task(bench, tasks[task_id], [codes[index] for index in runnable], sandbox)
            for index, verdict in zip(runnable, graded):
                verdicts[index] = verdict

    with ThreadPoolExecutor(max(1, workers)) as pool:
        map_in_pool(pool, grade_group, list(groups), f"grade {bench}", unit="completion",
                    weight=lambda task_id: len(groups[task_id]))
    return verdicts


def grade_mbppplus_many(pairs: Sequence[tuple[str, str]], **options) -> list[tuple[bool, str]]:
    """Registry form (``fpa.grading.get_grader``): ``(completion, task_id)`` pairs; the tasks from
    ``data_path=`` (the evaluate-code rule passes the fetched benchmark file), else the mirror file."""
    return grade_code_many("mbppplus", pairs, **options)


def grade_humanevalplus_many(pairs: Sequence[tuple[str, str]], **options) -> list[tuple[bool, str]]:
    return grade_code_many("humanevalplus", pairs, **options)


def grade_bigcodebench_many(pairs: Sequence[tuple[str, str]], **options) -> list[tuple[bool, str]]:
    return grade_code_many("bigcodebench", pairs, **options)


def grade_livecodebench_many(pairs: Sequence[tuple[str, str]], **options) -> list[tuple[bool, str]]:
    """LiveCodeBench v6: not in the mirror, so ``data_path=`` (test6.jsonl) is required."""
    return grade_code_many("livecodebench", pairs, **options)


def gold_program(bench: str, task: dict) -> str:
    if bench in mbppplus.DATASETS:
        return mbppplus.gold_program(bench, task)
    if bench == "bigcodebench":
        return bigcodebench.gold_program(task)
    raise ValueError(f"{bench}: no canonical solutions in the LiveCodeBench format")


def gold_selfcheck_code(mirror_dir: str | os.PathLike, bench: str, workers: int = 2,
                        data_path: str | os.PathLike | None = None) -> dict:  # fmt: skip
    """Grade every canonical solution of ``bench`` (the full mirror file, or ``data_path``).

    Returns ``{"bench", "passed", "total", "wall_s", "failed": {task_id: rule}, "known": {task_id: reason}}``,
    where ``known`` holds the failures listed in ``KNOWN_EXCEPTIONS``.
    """
    path = Path(data_path) if data_path is not None else Path(mirror_dir) / MIRROR_PATHS[bench]
    tasks = load_tasks(bench, path)
    start = time.monotonic()
    pairs = [(gold_program(bench, task), task_id) for task_id, task in tasks.items()]
    verdicts = grade_code_many(bench, pairs, tasks=tasks, workers=workers)
    failed = {task_id: rule for (_, task_id), (correct, rule) in zip(pairs, verdicts) if not correct}
    return {"bench": bench, "passed": len(pairs) - len(failed), "total": len(pairs),
            "wall_s": round(time.monotonic() - start, 1), "failed": failed,
            "known": {task_id: KNOWN_EXCEPTIONS[task_id] for task_id in failed if task_id in KNOWN_EXCEPTIONS}}
