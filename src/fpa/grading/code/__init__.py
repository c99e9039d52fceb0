"""Code graders: MBPP+ / HumanEval+ (EvalPlus), BigCodeBench, LiveCodeBench v6, and the code
training reward (``tests``).

Every program runs in ``fpa.sandbox``; see docs/code_eval.md for what is reused from each upstream
grader. Each benchmark family is one module that registers a ``CodeBench`` (``fpa.grading.code.bench``):
its catalog entry, prompts, program, limits, task loader, task grader and canonical solutions.
``grade_code_many(bench, pairs)`` takes
``(completion, task_id)`` pairs and returns ``(correct, rule)`` per pair, like the math graders;
Pass@1 is ``fpa.evaluation.metrics.pass_at_1`` over the resulting 0/1 matrix.
"""

from __future__ import annotations

from fpa.grading.code.bench import (SANDBOX_ENV, CodeBench, code_bench, code_benches, default_mirror, grade_code_many,
                                    load_tasks, make_sandbox, mirror_task_file, sandbox_mode)
from fpa.grading.code.extract import NOT_UTF8, extract_code, grader_error, is_utf8
from fpa.grading.code.gold import KNOWN_EXCEPTIONS, gold_program, gold_selfcheck_code

__all__ = ["KNOWN_EXCEPTIONS", "NOT_UTF8", "SANDBOX_ENV", "CodeBench", "code_bench", "code_benches", "default_mirror",
           "extract_code", "gold_program", "grader_error", "gold_selfcheck_code", "grade_code_many", "is_utf8", "load_tasks",
           "make_sandbox", "mirror_task_file", "sandbox_mode"]
