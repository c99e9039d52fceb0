"""Shared by the code-grader tests: tiny mirror files and the skip-or-fail rule."""

from __future__ import annotations

import os

import pytest

TINY = {
    "mbppplus": "tiny/mbppplus/MbppPlus-v0.2.0.jsonl",
    "humanevalplus": "tiny/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz",
    "bigcodebench": "tiny/bigcodebench/BigCodeBench-hf-2024-06-18.jsonl.gz",
}


def skip_or_fail(reason: str) -> None:
    """Skip with the reason printed; under CI=true a missing mirror or sandbox is a failure."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}")
    print(f"SKIP: {reason}")
    pytest.skip(reason)
