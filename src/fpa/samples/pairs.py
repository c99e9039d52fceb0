"""Preference pairs (chosen = correct, rejected = incorrect) inside problem groups.

Pair-based objectives (DPO, RPO, DPOP) see a micro-batch of whole problem groups
plus ``chosen``/``rejected`` indices into it. Pairs never cross groups, and a group
whose samples are all correct or all incorrect yields none. Rules:

- ``"all"``: every correct × incorrect pair of a group, Σ_g c_g·i_g pairs.
- ``"matched"``: a one-to-one matching, min(c_g, i_g) pairs per group. The
  permutation of group ``g`` is drawn from a generator seeded by (seed, g) alone,
  so a problem gets the same pairs in every epoch, in any micro-batch and after a
  resume, like a pair data set built once offline.

Shapes: reward, group [B]; chosen, rejected [P] long.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where pairs are built: the objective registry loads without it
    from torch import Tensor

PAIRING_RULES = ("all", "matched")


def _group_seed(seed: int, group_id: int) -> int:
    """A 63-bit generator seed from (seed, group id); distinct groups get distinct seeds."""
    return (seed * 0x9E3779B97F4A7C15 + group_id) % (1 << 63)


def _matched_pairs(correct: Tensor, group: Tensor, seed: int) -> tuple[Tensor, Tensor]:
    import torch
    chosen, rejected = [], []
    for group_id in torch.unique(group).tolist():
        members = group == group_id
        winners = torch.nonzero(members & correct).flatten()
        losers = torch.nonzero(members & ~correct).flatten()
        count = min(len(winners), len(losers))
        generator = torch.Generator().manual_seed(_group_seed(seed, group_id))
        chosen.append(winners[torch.randperm(len(winners), generator=generator)[:count]])
        rejected.append(losers[torch.randperm(len(losers), generator=generator)[:count]])
    empty = torch.zeros(0, dtype=torch.long)
    return torch.cat(chosen or [empty]), torch.cat(rejected or [empty])


def build_pairs(reward: Tensor, group: Tensor, rule: str, seed: int = 0) -> tuple[Tensor, Tensor]:
    """(chosen [P], rejected [P]) long indices into the micro-batch, on reward's device; reward > 0 is correct.

    Deterministic: "all" lists pairs by (chosen, rejected) index; "matched" depends
    only on ``seed`` and each group's own samples (their order in the batch included).
    """
    import torch
    if reward.dim() != 1 or group.shape != reward.shape:
        raise ValueError(
            f"build_pairs: reward and group must both be [B], got {tuple(reward.shape)} and {tuple(group.shape)}"
        )
    if rule not in PAIRING_RULES:
        raise ValueError(f"pairing: expected one of {list(PAIRING_RULES)}, got {rule!r}")
    group, correct = group.cpu(), reward.cpu() > 0
    if rule == "matched":
        chosen, rejected = _matched_pairs(correct, group, seed)
    else:
        same_group = group[:, None] == group[None, :]
        chosen, rejected = torch.nonzero(same_group & correct[:, None] & ~correct[None, :], as_tuple=True)
    return chosen.to(reward.device), rejected.to(reward.device)
