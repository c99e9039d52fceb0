"""The 12K MATH training split and its MATH-P guard."""

import json

import pytest

from fpa.data.benchmarks import MathProblem, load_math500
from fpa.data.math_train import build_math_train, guard_training_set


def _paths(root):
    return root / "math" / "train.jsonl.gz", root / "math" / "test.jsonl", root / "math500" / "test.jsonl"


def _perturb_paths(root):
    return [root / "math_perturb" / f"math_perturb_{kind}.jsonl" for kind in ("simple", "hard")]


def test_full_mirror_has_12000_problems(mirror):
    problems = build_math_train(*_paths(mirror), math_perturb_paths=_perturb_paths(mirror))
    assert len(problems) == 12_000
    assert sum(problem.source == "math_train" for problem in problems) == 7_500
    held_out = {problem.id for problem in load_math500(mirror / "math500" / "test.jsonl")}
    assert not held_out & {problem.id for problem in problems}


def test_tiny_drops_math500_problems(tiny):
    problems = build_math_train(*_paths(tiny), math_perturb_paths=_perturb_paths(tiny), expected_size=None)
    held_out = {problem.id for problem in load_math500(tiny / "math500" / "test.jsonl")}
    assert len(problems) == 20 + sum(1 for p in problems if p.source == "math_test")
    assert not held_out & {problem.id for problem in problems}
    assert problems[0].id == "train/algebra/0.json" and problems[0].answer == "0"


def test_expected_size_is_enforced(tiny):
    with pytest.raises(ValueError, match="MATH500 unique_ids not in"):
        build_math_train(*_paths(tiny))  # tiny MATH500 is not inside tiny MATH test


def test_guard_refuses_math_perturb_source():
    bad = MathProblem("math_perturb_hard/1", "What is 2+2?", "4", "math_perturb_hard")
    with pytest.raises(ValueError, match="math_perturb_hard/1: source 'math_perturb_hard' is test-only"):
        guard_training_set([MathProblem("a", "q", "1", "math_train"), bad])


def test_guard_refuses_math_perturb_problem_text():
    perturbed = MathProblem("math_perturb_simple/9", "What is\n 2+2?", "4", "math_perturb_simple")
    leaked = MathProblem("train/x/1.json", "What is 2+2? ", "4", "math_train")
    match = r"train/x/1.json \(math_train\): problem text equals MATH-P math_perturb_simple/9"
    with pytest.raises(ValueError, match=match):
        guard_training_set([leaked], [perturbed])
    guard_training_set([leaked], [])  # without the MATH-P file only the source is checked


def test_builder_refuses_a_leaked_math_perturb_problem(tiny, tmp_path):
    # A MATH-P file whose problem is copied from tiny MATH test (outside MATH500).
    test_row = json.loads((tiny / "math" / "test.jsonl").read_text().splitlines()[0])
    leak = {"problem_id": 1, "problem": test_row["problem"], "answer": 2, "original_split": "test"}
    path = tmp_path / "math_perturb_simple.jsonl"
    path.write_text(json.dumps(leak) + "\n")
    with pytest.raises(ValueError, match="problem text equals MATH-P math_perturb_simple/1"):
        build_math_train(*_paths(tiny), math_perturb_paths=[path], expected_size=None)
