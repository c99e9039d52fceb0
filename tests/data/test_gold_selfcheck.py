"""Gold self-check on the tiny mirror: every gold grades correct, or is a documented exception."""

import pytest

from fpa.data.selfcheck import KNOWN_EXCEPTIONS, gold_selfcheck


def test_gold_selfcheck_on_tiny(tiny):
    report = gold_selfcheck(tiny, workers=2)
    assert set(report["benchmarks"]) == {
        "gsm8k", "math500", "math_perturb_simple", "math_perturb_hard", "gaokao2023en",
        "olympiadbench", "amc23", "aime24", "aime25", "aime26",
    }  # fmt: skip
    undocumented = [e for e in report["exceptions"] if e["id"] not in KNOWN_EXCEPTIONS]
    assert undocumented == []
    wrong = {e["benchmark"]: [] for e in report["exceptions"]}
    for exception in report["exceptions"]:
        if not exception["correct"]:
            wrong[exception["benchmark"]].append(exception["id"])
    for name, counts in report["benchmarks"].items():
        assert counts["total"] == 20
        assert counts["correct"] == counts["total"] - len(wrong.get(name, [])), name


def test_every_known_exception_has_a_reason():
    assert all(reason.strip() for reason in KNOWN_EXCEPTIONS.values())


def test_unknown_benchmark_lists_the_choices(tiny):
    with pytest.raises(ValueError, match="unknown or missing \\['amc24'\\]; expected some of"):
        gold_selfcheck(tiny, benchmarks=["amc24"])
