"""DAPO's dynamic sampling on TRL's generation batches: which groups carry signal, and how
batches of kept groups from several generation rounds become one.

A generation batch is TRL's dict of per-completion tensors (rows) in groups of G consecutive
rows, one group per prompt. Prompt tensors are left-padded, completion tensors right-padded,
so rows from different rounds are joined by padding each to the longest.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import torch

PROMPT_KEYS = ("prompt_ids", "prompt_mask")
# per-completion tensors [N] or [N, C]; anything else in a batch (images, tools) is not supported
ROW_KEYS = ("advantages", "completion_ids", "completion_mask", "old_per_token_logps", "sampling_per_token_logps",
            "ref_per_token_logps", "importance_sampling_ratio", *PROMPT_KEYS)
BATCH_KEYS = ("num_items_in_batch",)  # recomputed for the joined batch


def informative_groups(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """[N / G] bool: the groups whose rewards differ (0 < #correct < G for a ±1 reward).

    ``rewards``: [N], G consecutive rows per group. A group whose completions all got the same
    reward has zero advantage everywhere and no gradient (paper appendix "RLVR Training").
    """
    if rewards.dim() != 1 or rewards.numel() % group_size:
        raise ValueError(f"rewards: expected shape [N] with N a multiple of G={group_size}, got {tuple(rewards.shape)}")
    grouped = rewards.view(-1, group_size)
    return grouped.amax(dim=1) > grouped.amin(dim=1)


def take_groups(batch: Mapping[str, object], groups: torch.Tensor, group_size: int) -> dict:
    """The rows of ``groups`` ([K] group indices), in that order, of every per-completion tensor."""
    unknown = sorted(set(batch) - set(ROW_KEYS) - set(BATCH_KEYS))
    if unknown:
        raise ValueError(f"dynamic sampling: generation batch key {unknown[0]!r} is not supported "
                         f"(expected some of {sorted(ROW_KEYS + BATCH_KEYS)})")
    rows = (groups.view(-1, 1) * group_size + torch.arange(group_size, device=groups.device)).view(-1)
    return {key: value[rows.to(value.device)] for key, value in batch.items()
            if key in ROW_KEYS and value is not None}


def concat_batches(batches: Sequence[Mapping[str, torch.Tensor]], pad_token_id: int) -> dict:
    """One batch of the rows of ``batches``: prompt tensors padded on the left, completion
    tensors on the right, to the longest of each (ids with ``pad_token_id``, the rest with 0)."""
    keys = list(batches[0])
    if any(list(batch) != keys for batch in batches):
        raise ValueError("dynamic sampling: generation rounds returned different keys")
    joined = {}
    for key in keys:
        parts = [batch[key] for batch in batches]
        if parts[0].dim() == 2:
            width = max(part.size(1) for part in parts)
            fill = pad_token_id if key.endswith("_ids") else 0
            side = "left" if key in PROMPT_KEYS else "right"
            parts = [_pad(part, width, fill, side) for part in parts]
        joined[key] = torch.cat(parts, dim=0)
    return joined


def _pad(tensor: torch.Tensor, width: int, fill: int, side: str) -> torch.Tensor:
    missing = width - tensor.size(1)
    if not missing:
        return tensor
    pad = torch.full((tensor.size(0), missing), fill, dtype=tensor.dtype, device=tensor.device)
    return torch.cat([pad, tensor] if side == "left" else [tensor, pad], dim=1)
