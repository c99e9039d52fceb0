"""benchmarks/toy_regime/toy_regime.py: which of issue 59's three preconditions a world's measurements meet."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from toy_regime import toy_regime  # noqa: E402


def _entanglement(*seeds: tuple[float, float]) -> dict:
    """A stage whose full-chain pairs have, per seed, this mean cosine and share of positive pairs (64 pairs)."""
    return {"seeds": {str(i): {"full": {"mean_cosine": mean, "share_positive": share, "pairs": 64}}
                      for i, (mean, share) in enumerate(seeds)}}


def _offrl(correct, incorrect, kl) -> dict:
    """One seed: (start, end) log-ratios of correct and incorrect samples, KL per λ of one later snapshot."""
    return {"seeds": {"42": {"logratio": {"correct_start": correct[0], "correct_end": correct[1],
                                          "incorrect_start": incorrect[0], "incorrect_end": incorrect[1]},
                             "kl_per_token": {"50": kl}}}}


def test_entangled_needs_a_positive_mean_and_most_pairs_positive():
    assert toy_regime.holds({"entanglement": _entanglement((0.05, 0.6), (0.01, 0.5))})["entangled"]
    # positive mean, but half the pairs or fewer positive
    assert not toy_regime.holds({"entanglement": _entanglement((0.05, 0.5), (0.01, 0.5))})["entangled"]
    # most pairs positive, negative mean
    assert not toy_regime.holds({"entanglement": _entanglement((-0.05, 0.6), (0.01, 0.6))})["entangled"]
    assert set(toy_regime.holds({}).values()) == {None}


def test_over_penalised_and_extrapolates_read_the_offrl_run():
    closer = {"0.0": 0.5, "0.25": 0.6, "1.0": 0.4}
    farther = {"0.0": 0.5, "0.25": 0.6, "1.0": 0.7}
    held = toy_regime.holds({"offrl": _offrl((-0.1, -3.0), (-1.0, -9.0), closer)})
    assert held["over_penalised"] and held["extrapolates"]
    # today's shape: correct samples' log-ratio rises to above 0, the anchor is closest
    held = toy_regime.holds({"offrl": _offrl((-0.1, 0.2), (-1.0, -6.0), farther)})
    assert held["over_penalised"] is False and held["extrapolates"] is False


def test_on_the_seeds_mean_one_seed_can_carry_precondition_3():
    stage = _offrl((-0.1, -3.0), (-1.0, -9.0), {"0.0": 0.1, "0.5": 0.2})
    stage["seeds"]["43"] = {**stage["seeds"]["42"], "kl_per_token": {"50": {"0.0": 2.0, "0.5": 0.5}}}
    held = toy_regime.holds({"offrl": stage})
    assert held["extrapolates"] is False and held["extrapolates_on_mean"] is True
    assert toy_regime.mean_kl(stage) == {"50": {"0.0": 1.05, "0.5": 0.35}}
