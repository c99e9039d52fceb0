"""The registry: every method, its paper defaults, its parameter checks, and a smoke run. The checks
every objective passes run on each registered one, a user's package's included (docs/paper.md)."""

import dataclasses

import pytest
import torch

from fpa.objectives import OBJECTIVES
from fpa.samples.pairs import PAIRING_RULES, build_pairs
from fpa.training.batch_statistic import batch_mean, with_batch_mean

METHODS = {"sft", "dpo", "rpo", "dpop", "kto", "apo", "offrl", "offrl_kl", "offrl_rs", "fpa", "fpa_cor", "fpa_incor"}
PAPER_DEFAULTS = {
    "dpo": {"beta": 0.1}, "rpo": {"beta": 0.1, "alpha": 1.0}, "dpop": {"beta": 0.1, "lam_dpop": 50.0},
    "kto": {"beta": 0.05, "lam_w": 1.0, "lam_l": 1.0}, "apo": {"beta1": 0.5, "beta2": 1e-3},
    "offrl_kl": {"tau": 0.4}, "offrl_rs": {"reward_incorrect": -0.5}, "fpa": {"lam": 2.0},
}


def test_registry_holds_all_methods():
    assert {name for name in OBJECTIVES if OBJECTIVES.module_of(name).startswith("fpa.")} == METHODS
    assert all(objective.summary for objective in OBJECTIVES.values())


@pytest.mark.parametrize("name", sorted(PAPER_DEFAULTS))
def test_defaults_are_the_papers(name):
    params = OBJECTIVES[name].params_type()
    assert {key: getattr(params, key) for key in PAPER_DEFAULTS[name]} == PAPER_DEFAULTS[name]


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_invalid_parameters_name_the_field(name):
    objective = OBJECTIVES[name]
    for field in dataclasses.fields(objective.params_type):
        where = f"config.yaml: methods.{name}"
        bad_values = ["bogus"] if isinstance(field.default, str) else [-1.0, 1.0, "0.5x"]
        rejected = 0
        for value in bad_values:
            try:
                objective.parse_params({field.name: value}, where)
            except ValueError as err:
                assert str(err).startswith(f"{where}.{field.name}: expected"), err
                rejected += 1
        assert rejected >= 1, (name, field.name)


def test_pair_objectives_declare_a_pairing_rule():
    for objective in OBJECTIVES.values():
        if "pairs" in objective.requires:
            assert objective.params_type().pairing in PAIRING_RULES
            objective.parse_params({"pairing": "matched"}, "where")


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_every_objective_runs_and_backpropagates(tiny, name):
    objective = OBJECTIVES[name]
    if objective.sample_filter == "correct":
        lm = tiny((1.0, 1.0, 1.0), (0, 1, 1), seed=1)
    else:
        lm = tiny((1.0, -1.0, -1.0, 1.0, -1.0), (0, 0, 0, 1, 1), seed=1)
    params = objective.params_type()
    pairs = build_pairs(lm.reward, lm.group, params.pairing) if "pairs" in objective.requires else None
    stats = lm.stats(lam=objective.hat_lambda(params), fwd_kl="fwd_kl" in objective.requires, pairs=pairs)
    # what the engine does for any objective that declares a batch statistic (KTO's z0)
    stats = with_batch_mean(stats, batch_mean(objective, params, [stats], reduce_sum=lambda total: total))
    loss, metrics = objective.loss(stats, params)
    assert loss.shape == () and torch.isfinite(loss)
    assert all(value.shape == () and not value.requires_grad for value in metrics.values())
    assert torch.isfinite(lm.grad(loss)).all()
