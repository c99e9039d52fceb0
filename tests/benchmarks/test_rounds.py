"""Paired rounds (``benchmarks/shared/rounds.py``), which every benchmark's ratios go through."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from shared.rounds import paired_ratio, rotated, spread, spread_text  # noqa: E402


def test_each_case_leads_one_round_in_turn_and_every_round_runs_every_case():
    orders = [rotated(["a", "b", "c"], round_) for round_ in range(4)]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]


def test_a_ratio_is_taken_within_each_round_not_between_medians():
    # medians 2 and 2 would give 1.0; the rounds' own ratios are 4, 0.25 and 1
    ratio = paired_ratio([4.0, 1.0, 2.0], [1.0, 4.0, 2.0])
    assert ratio == {"median": 1.0, "min": 0.25, "max": 4.0, "n": 3}
    assert spread_text(ratio, 2) == "1.00 [0.25–4.00]"


def test_rounds_of_unequal_counts_are_refused_rather_than_cut_short():
    with pytest.raises(ValueError):
        paired_ratio([1.0, 2.0, 3.0], [1.0, 2.0])


def test_a_spread_takes_a_generator():
    assert spread(x / 2 for x in (2, 4, 6)) == {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3}
