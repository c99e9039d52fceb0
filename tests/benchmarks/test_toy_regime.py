"""benchmarks/toy_regime: which of issue 59's three preconditions a world's measurements meet, per set of seeds,
and the config each stage runs with."""

import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from toy_regime import preconditions, render, toy_regime  # noqa: E402


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
    assert preconditions.holds({"entanglement": _entanglement((0.05, 0.6), (0.01, 0.5))})["entangled"]
    # positive mean, but half the pairs or fewer positive
    assert not preconditions.holds({"entanglement": _entanglement((0.05, 0.5), (0.01, 0.5))})["entangled"]
    # most pairs positive, negative mean
    assert not preconditions.holds({"entanglement": _entanglement((-0.05, 0.6), (0.01, 0.6))})["entangled"]
    assert set(preconditions.holds({}).values()) == {None}


def test_over_penalised_and_extrapolates_read_the_offrl_run():
    closer = {"0.0": 0.5, "0.25": 0.6, "1.0": 0.4}
    farther = {"0.0": 0.5, "0.25": 0.6, "1.0": 0.7}
    held = preconditions.holds({"offrl": _offrl((-0.1, -3.0), (-1.0, -9.0), closer)})
    assert held["over_penalised"] and held["extrapolates"]
    # today's shape: correct samples' log-ratio rises to above 0, the anchor is closest
    held = preconditions.holds({"offrl": _offrl((-0.1, 0.2), (-1.0, -6.0), farther)})
    assert held["over_penalised"] is False and held["extrapolates"] is False


def test_on_the_seeds_mean_one_seed_can_carry_precondition_3():
    stage = _offrl((-0.1, -3.0), (-1.0, -9.0), {"0.0": 0.1, "0.5": 0.2})
    stage["seeds"]["43"] = {**stage["seeds"]["42"], "kl_per_token": {"50": {"0.0": 2.0, "0.5": 0.5}}}
    held = preconditions.holds({"offrl": stage})
    assert held["extrapolates"] is False and held["extrapolates_on_mean"] is True
    assert preconditions.mean_kl(stage) == {"50": {"0.0": 1.05, "0.5": 0.35}}


def test_a_world_meets_a_precondition_only_on_every_set_of_seeds_that_measured_it():
    entangled, not_entangled = _entanglement((0.05, 0.6)), _entanglement((-0.05, 0.4))
    world = {"runs": {"42-44": {"entanglement": entangled}, "101-103": {"entanglement": entangled}}}
    assert preconditions.world_holds(world)["entangled"] is True
    world["runs"]["101-103"]["entanglement"] = not_entangled
    assert preconditions.world_holds(world) == {"entangled": False, "over_penalised": None, "extrapolates": None,
                                                "extrapolates_on_mean": None}
    assert [preconditions.seed_set(s) for s in ([44, 42, 43], [101, 102, 103], [7], [1, 5])] == [
        "42-44", "101-103", "7", "1,5"]


def test_the_stage_config_is_todays_with_the_worlds_overrides_and_the_seeds_asked_for():
    today = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config = toy_regime.stage_config("marks", "table", [101, 102, 103])
    assert config["seeds"] == [101, 102, 103] and config["models"]["toy"]["toy"] == {"preset": "default",
                                                                                      "trace_style": "marks"}
    assert config["methods"] == today["methods"] and config["training"] == today["training"]
    assert list(toy_regime.stage_config("today", "offrl", toy_regime.SEEDS)["methods"]) == ["offrl"]
    assert toy_regime.targets("entanglement", [101, 102]) == [
        "results/analysis/entanglement/toy/base/101.csv", "results/analysis/entanglement/toy/base/102.csv"]
    with pytest.raises(SystemExit):
        toy_regime.parse_args(["--world", "today", "--stage", "table", "--seeds", "101", "101"])


def test_the_differences_of_each_set_of_seeds_stand_side_by_side(tmp_path):
    table = "| Method | toy8 |\n|---|:---:|\n| Base | 80.00 ± 1.00 |\n| Off-RL | 81.00 ± 1.00 |\n| FPA | 83.00 ± 3.00 |\n"
    (tmp_path / toy_regime.TABLE).parent.mkdir(parents=True)
    runs = {}
    for seeds, fpa in (("42-44", "83.00"), ("101-103", "80.50")):
        (tmp_path / toy_regime.TABLE).write_text(table.replace("83.00", fpa))
        runs[seeds] = {"table": toy_regime.table_differences(tmp_path)}
    lines = render.table_section("today", {"runs": runs})
    # pooled sd: sqrt((1² + 3²) / 2) = sqrt(5); against Base as against Off-RL
    assert "| FPA − Off-RL | 42–44 | +2.00 (+0.9) |" in lines and "| FPA − Off-RL | 101–103 | -0.50 (-0.2) |" in lines
    assert "| FPA − Base | 42–44 | +3.00 (+1.3) |" in lines and "| FPA − Base | 101–103 | +0.50 (+0.2) |" in lines
