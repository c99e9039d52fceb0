"""A code benchmark family: the record its module registers (``CodeBench``), the sandbox it runs in, and
the grading of ``(completion, task_id)`` pairs with it.

A family's module owns the whole benchmark: its default task file (an entry of the catalog's ``code``
section, whose ``loader`` names the family), the prompts made from that file, how a completion becomes
the program the harness runs, what runs in the sandbox and the verdict. Every list of families is
derived from the registered records (``fpa.grading``'s registry): the problem loaders of
``fpa.data.benchmarks``, the config schema's grader choices, the graders' table of config/README.md.
Adding a family is adding its module (docs/code_eval.md, "Adding a benchmark family").

The task file of a benchmark is the file the caller names (``data_path=``: the evaluate-code rule
passes the fetched one), else the mirror's copy of the family's entry in the project's catalog
(``config/benchmarks.yaml``, section ``code``).
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ClassVar, Sequence

from fpa.catalog import CATALOG, CODE_SECTION, read_benchmarks_config
from fpa.grading import GRADERS
from fpa.grading.code.extract import NOT_UTF8, extract_code, grader_error, is_utf8
from fpa.progress import map_in_pool
from fpa.project import PROJECT_ROOT
from fpa.samples.records import MathProblem
from fpa.sandbox import Limits, Sandbox

SANDBOX_ENV = "FPA_SANDBOX"


@dataclass(frozen=True)
class CodeBench:
    """A code benchmark (``benchmarks.<b>.grader`` in config, and the ``loader`` of its catalog entries)
    whose gold is a task id of its task file.

    Attributes:
      name: registry key: the grader, and the catalog ``loader`` of the files it reads.
      task_file: its default entry in the catalog's ``code`` section (the mirror's copy is the default task file).
      limits: the sandbox limits of each run.
      load_tasks: task file -> ``{task_id: task}``.
      load_problems: ``(task file, source)`` -> the prompt records ``{id, problem, answer = task id, source}``
        (rule prepare_benchmark), each problem as the benchmark's harness words it.
      program: ``(task, code)`` -> the program the harness runs, from the code of a completion (its last
        fenced block, ``extract_code``): whole, or assembled with the task's prompt.
      grade_task: ``(task, programs, sandbox)`` -> a verdict per program of one task.
      gold_program: a task's canonical solution; None where the benchmark has none.
      check_environment: run once on each new sandbox (fails loudly instead of all-timeout results).
    """

    name: str
    task_file: str
    limits: Limits
    load_tasks: Callable[[str | os.PathLike], dict[str, dict]]
    load_problems: Callable[[str | os.PathLike, str], list[MathProblem]]
    program: Callable[[dict, str], str]
    grade_task: Callable[[dict, list[str], Sandbox], list[tuple[bool, str]]]
    gold_program: Callable[[dict], str] | None = None
    check_environment: Callable[[Sandbox], None] | None = None
    runs_code: ClassVar[bool] = True
    rewards: ClassVar[tuple[str, ...]] = ()  # a benchmark, never a training reward

    def grade_many(self, pairs: Sequence[tuple[str, str]], **options) -> list[tuple[bool, str]]:
        """The grader: ``grade_code_many`` of this benchmark."""
        return grade_code_many(self.name, pairs, **options)


def whole_program(task: dict, code: str) -> str:
    """The completion's code is the whole program."""
    return code


def code_benches() -> list[str]:
    return [name for name, grader in GRADERS.items() if isinstance(grader, CodeBench)]


def code_bench(name: str) -> CodeBench:
    bench = GRADERS.get(name)
    if not isinstance(bench, CodeBench):
        raise ValueError(f"bench: expected one of {code_benches()}, got {name!r}")
    return bench


def default_mirror() -> Path:
    """$FPA_DATA_MIRROR, else ``shared/data`` beside the repository."""
    return Path(os.environ.get("FPA_DATA_MIRROR", PROJECT_ROOT.parent / "shared" / "data"))


def mirror_task_file(name: str, mirror: str | os.PathLike | None = None) -> Path:
    """Where ``mirror`` (default: ``default_mirror()``) holds the task file of benchmark ``name``."""
    entry = read_benchmarks_config(CATALOG)[CODE_SECTION][code_bench(name).task_file]
    return Path(mirror if mirror is not None else default_mirror()) / entry["path"]


def load_tasks(name: str, data_path: str | os.PathLike) -> dict[str, dict]:
    return code_bench(name).load_tasks(data_path)


def sandbox_mode() -> str:
    """``bwrap``, unless the user explicitly opts out with ``FPA_SANDBOX=none`` (then the
    pipeline runs model-generated code UNSANDBOXED, warns, and records it with each result)."""
    mode = os.environ.get(SANDBOX_ENV, "bwrap")
    if mode not in ("bwrap", "none"):
        raise ValueError(f"environment variable {SANDBOX_ENV}: expected 'bwrap' or 'none', got {mode!r}")
    return mode


@functools.lru_cache(maxsize=None)
def make_sandbox(name: str, mode: str | None = None) -> Sandbox:
    """One sandbox per benchmark and process, with the benchmark's limits (and environment checked)."""
    bench = code_bench(name)
    sandbox = Sandbox(bench.limits, mode=mode or sandbox_mode())
    if bench.check_environment is not None:
        bench.check_environment(sandbox)
    return sandbox


def grade_code_many(
    name: str,
    pairs: Sequence[tuple[str, str]],
    *,
    data_path: str | os.PathLike | None = None,
    tasks: dict[str, dict] | None = None,
    workers: int = 2,
    sandbox: Sandbox | None = None,
) -> list[tuple[bool, str]]:
    """Grade ``(completion, task_id)`` pairs of benchmark ``name``; ``[(correct, rule)]`` in input order.

    Tasks come from ``tasks``, else ``data_path``, else the mirror's task file of the benchmark.
    Completions go through ``extract_code`` and the family's ``program``; a program that is not UTF-8 is
    ``NOT_UTF8`` without a run; a task its grader cannot grade (its tests malformed) gives its pairs
    ``grader_error: ...``.
    Pairs are grouped by task; ``workers`` threads grade the groups, and each run is its own
    sandboxed process.
    """
    bench = code_bench(name)
    if tasks is None:
        if data_path is None:
            data_path = mirror_task_file(name)
            if not data_path.is_file():
                raise ValueError(f"{name}: task file not in the data mirror: {data_path}; pass data_path "
                                 f"(config/benchmarks.yaml {CODE_SECTION}.{bench.task_file})")
        tasks = bench.load_tasks(data_path)
    unknown = sorted({task_id for _, task_id in pairs} - set(tasks))
    if unknown:
        raise ValueError(f"{name}: unknown task ids {unknown[:5]} ({len(unknown)} in all)")
    sandbox = sandbox or make_sandbox(name)
    groups: dict[str, list[int]] = {}
    for index, (_, task_id) in enumerate(pairs):
        groups.setdefault(task_id, []).append(index)
    verdicts: list[tuple[bool, str]] = [(False, "not_graded")] * len(pairs)

    def grade_group(task_id: str) -> None:
        task = tasks[task_id]
        programs = {index: bench.program(task, extract_code(pairs[index][0])) for index in groups[task_id]}
        runnable = [index for index, program in programs.items() if is_utf8(program)]
        for index in programs.keys() - set(runnable):
            verdicts[index] = NOT_UTF8
        if runnable:
            try:
                graded = bench.grade_task(task, [programs[index] for index in runnable], sandbox)
            except Exception as error:  # noqa: BLE001  a task the grader cannot grade costs that task only
                graded = [grader_error(error)] * len(runnable)
            for index, verdict in zip(runnable, graded):
                verdicts[index] = verdict

    with ThreadPoolExecutor(max(1, workers)) as pool:
        map_in_pool(pool, grade_group, list(groups), f"grade {name}", unit="completion",
                    weight=lambda task_id: len(groups[task_id]))
    return verdicts
