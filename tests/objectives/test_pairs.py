"""Preference pairs inside problem groups (fpa.samples.pairs)."""

import pytest
import torch

from fpa.samples.pairs import PAIRING_RULES, build_pairs

# Groups: 7 -> 2 correct, 3 incorrect; 2 -> 3 correct, 1 incorrect; 5 -> all correct; 9 -> all incorrect.
REWARD = torch.tensor([1, -1, 1, -1, -1, 1, 1, 1, -1, 1, 1, -1, -1], dtype=torch.float64)
GROUP = torch.tensor([7, 7, 7, 7, 7, 2, 2, 2, 2, 5, 5, 9, 9])


def check_pairs(chosen, rejected):
    assert chosen.dtype == rejected.dtype == torch.long and chosen.shape == rejected.shape
    assert (GROUP[chosen] == GROUP[rejected]).all()  # never across problems
    assert (REWARD[chosen] > 0).all() and (REWARD[rejected] < 0).all()
    assert not set(GROUP[chosen].tolist()) & {5, 9}  # groups without a pair yield none


def test_all_rule_takes_every_correct_incorrect_pair():
    chosen, rejected = build_pairs(REWARD, GROUP, "all")
    check_pairs(chosen, rejected)
    assert len(chosen) == 2 * 3 + 3 * 1
    assert len(set(zip(chosen.tolist(), rejected.tolist()))) == len(chosen)


def test_matched_rule_is_one_to_one_and_seeded():
    chosen, rejected = build_pairs(REWARD, GROUP, "matched", seed=42)
    check_pairs(chosen, rejected)
    assert len(chosen) == min(2, 3) + min(3, 1)
    assert len(set(chosen.tolist())) == len(chosen) and len(set(rejected.tolist())) == len(rejected)
    again = build_pairs(REWARD, GROUP, "matched", seed=42)
    assert torch.equal(chosen, again[0]) and torch.equal(rejected, again[1])
    others = {tuple(build_pairs(REWARD, GROUP, "matched", seed=s)[0].tolist()) for s in range(20)}
    assert len(others) > 1  # the seed matters


def test_matched_rule_ignores_the_rest_of_the_micro_batch():
    alone = build_pairs(REWARD[:5], GROUP[:5], "matched", seed=1)
    together = build_pairs(REWARD, GROUP, "matched", seed=1)
    in_group_7 = GROUP[together[0]] == 7
    assert torch.equal(together[0][in_group_7], alone[0]) and torch.equal(together[1][in_group_7], alone[1])


@pytest.mark.parametrize("rule", PAIRING_RULES)
def test_no_pairs_gives_empty_indices(rule):
    chosen, rejected = build_pairs(REWARD[9:], GROUP[9:], rule)
    assert chosen.shape == rejected.shape == (0,) and chosen.dtype == torch.long


def test_unknown_rule_is_rejected():
    with pytest.raises(ValueError, match=r"pairing: expected one of \['all', 'matched'\], got 'some'"):
        build_pairs(REWARD, GROUP, "some")
