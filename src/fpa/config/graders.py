"""What a benchmark's grader name means for the plan: whether it runs code, whether it reads its
benchmark's task file, and which grader a ``source: validation`` benchmark gets."""

from __future__ import annotations


def is_code_grader(grader: str) -> bool:
    """Graders that execute code in the sandbox (those of them that read a task file:
    ``reads_task_file``)."""
    from fpa.grading import GRADERS

    return grader in GRADERS and GRADERS[grader].runs_code


def reads_task_file(grader: str) -> bool:
    """Graders whose answer is a task id looked up in the benchmark's task file (the code benchmarks'
    own checks): rules ``generate_code`` + ``evaluate_code`` pass them that file. Every other grader,
    the code training reward included (its answer is the test spec), grades in the job that samples."""
    from fpa.grading.code import code_benches

    return grader in code_benches()


def validation_grader(dataset_source: str) -> str:
    """The grader of a ``source: validation`` benchmark: its dataset's (a sampled one's samples', or
    the Step-DPO pairs' final answers')."""
    from fpa.data.step_dpo import ANSWER_GRADER
    from fpa.grading import dataset_graders

    return {**dataset_graders(), "step_dpo": ANSWER_GRADER}[dataset_source]
