"""Which ready job Snakemake starts first.

Snakemake's scheduler fills the free cores with the ready jobs of highest ``priority``
first. A user's benchmark file is validated before anything else: a bad one fails in
seconds, not after the base model's SFT. On a few cores the default run is compute-bound,
so this order decides how long cores idle: everything that training waits on goes first
(data, base model, offline samples, reference cache), then training, then the long jobs
that follow it (evaluation, code generation and grading), and the short ones (curves,
analyses, figures, tables) fill the cores at the end instead of delaying training. A job is
never less urgent than a job it feeds (``tests/workflow/test_priority.py`` checks the rule
graphs of the shipped configs).
"""

from __future__ import annotations

from enum import IntEnum


class Priority(IntEnum):
    FILL = 0  # curves, analyses, figures, tables: nothing waits on them but the end
    AFTER_TRAINING = 1  # the long jobs a finished run starts
    TRAINING = 2
    TRAINING_INPUTS = 3
    INPUT_CHECKS = 4  # a user's file validated (seconds) before the jobs that take minutes
