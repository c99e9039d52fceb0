"""The canonical solutions of a code benchmark graded by its own harness (``gold_selfcheck_code``),
and why the few that fail do (``KNOWN_EXCEPTIONS``; figures: docs/code_eval.md)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from fpa.grading.code.bench import code_bench, grade_code_many, mirror_task_file

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


def gold_program(name: str, task: dict) -> str:
    """The canonical solution of one task of benchmark ``name`` as a program its harness runs."""
    bench = code_bench(name)
    if bench.gold_program is None:
        raise ValueError(f"{name}: no canonical solutions in its task file")
    return bench.gold_program(task)


def gold_selfcheck_code(mirror_dir: str | os.PathLike, name: str, workers: int = 2,
                        data_path: str | os.PathLike | None = None) -> dict:  # fmt: skip
    """Grade every canonical solution of benchmark ``name`` (the mirror's task file, or ``data_path``).

    Returns ``{"bench", "passed", "total", "wall_s", "failed": {task_id: rule}, "known": {task_id: reason}}``,
    where ``known`` holds the failures listed in ``KNOWN_EXCEPTIONS``.
    """
    path = Path(data_path) if data_path is not None else mirror_task_file(name, mirror_dir)
    tasks = code_bench(name).load_tasks(path)
    start = time.monotonic()
    pairs = [(gold_program(name, task), task_id) for task_id, task in tasks.items()]
    verdicts = grade_code_many(name, pairs, tasks=tasks, workers=workers)
    failed = {task_id: rule for (_, task_id), (correct, rule) in zip(pairs, verdicts) if not correct}
    return {"bench": name, "passed": len(pairs) - len(failed), "total": len(pairs),
            "wall_s": round(time.monotonic() - start, 1), "failed": failed,
            "known": {task_id: KNOWN_EXCEPTIONS[task_id] for task_id in failed if task_id in KNOWN_EXCEPTIONS}}
