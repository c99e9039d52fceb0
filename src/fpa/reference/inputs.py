"""Where the frozen reference's hidden states come from during training.

``cached``: z_ref read from the reference cache (one pass over the dataset in the
``cache_reference`` rule); only the reference output head is kept in memory and no
reference transformer runs during training. ``online``: the reference body runs on
every micro-batch (for comparison; both give the same statistics up to the cache's
storage rounding).

From the cache, only objectives that need the reference's per-token distribution (FPA's
π̂, the forward KL) read z_ref and keep W_ref in memory; the others (DPO, KTO, ... and the
logged log π_θ − log π_ref of every run) read the cached per-sequence log π_ref(y|x) and
no reference head runs. Objectives that need nothing from the reference still read it when
``diagnostics`` is on; with it off, or without a cache, they get ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor
from transformers import AutoModelForCausalLM

from fpa.objectives.base import Objective
from fpa.reference.cache import ReferenceCache
from fpa.training.batches import Batch
from fpa.training.precision import decoder_hidden


@dataclass(frozen=True)
class ReferenceInputs:
    """hidden [N, d_ref] at the batch's completion positions, weight [V, d_ref], logsumexp [N] if cached;
    or only ``sequence_logp`` [B], log π_ref(y|x) per sample, for objectives that need no more."""

    hidden: Tensor | None
    weight: Tensor | None
    logsumexp: Tensor | None
    sequence_logp: Tensor | None = None


class CachedReference:
    def __init__(self, cache_dir: str, splits: dict[str, list[dict]], device, *, per_token: bool):
        """``per_token``: the objective needs the reference's per-token distribution (z_ref, W_ref)."""
        self.cache = ReferenceCache(cache_dir)
        self.weight = self.cache.head_weight(torch.float32).to(device) if per_token else None
        self.splits = splits
        self.device = device

    def inputs(self, batch: Batch, split: str) -> ReferenceInputs:
        samples = self.splits[split]
        indices = self.cache.indices([samples[i]["id"] for i in batch.sample_index.tolist()])
        if self.weight is None:
            if not torch.equal(self.cache.lengths(indices), batch.length.cpu().to(torch.int64)):
                raise ValueError(f"{self.cache.path}: cached completion lengths differ from the training batch's "
                                 "(tokenizer or max_length changed since the cache was built)")
            return ReferenceInputs(None, None, None, self.cache.ref_logp(indices).to(self.device))
        cached = self.cache.batch(indices)
        if not torch.equal(cached.targets, batch.targets.cpu()):
            raise ValueError(f"{self.cache.path}: cached tokens differ from the training batch's "
                             "(tokenizer or max_length changed since the cache was built)")
        return ReferenceInputs(cached.hidden.to(self.device), self.weight, cached.ref_lse.to(self.device))


class OnlineReference:
    """The reference body beside the policy, its forward in the policy's precision (``autocast``)."""

    def __init__(self, model_dir: str, device, autocast: torch.dtype | None = None):
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
        self.model.requires_grad_(False)
        self.weight = self.model.get_output_embeddings().weight
        self.device, self.autocast = device, autocast

    @torch.no_grad()
    def inputs(self, batch: Batch, split: str) -> ReferenceInputs:
        out = decoder_hidden(self.model, batch.input_ids.to(self.device), batch.attention_mask.to(self.device),
                             self.autocast)
        return ReferenceInputs(out[batch.rows.to(self.device), batch.positions.to(self.device)], self.weight, None)


def make_reference(objective: Objective, mode: str, *, reference_dir: str | None, model_dir: str,
                   train_samples: list[dict], val_samples: list[dict], device, diagnostics: bool = False,
                   autocast: torch.dtype | None = None):
    splits = {"train": train_samples, "val": val_samples}
    per_token = bool({"hat", "fwd_kl"} & set(objective.requires))
    if not objective.needs_reference:
        if diagnostics and mode == "cached" and reference_dir is not None:
            return CachedReference(reference_dir, splits, device, per_token=False)
        return None
    if mode == "online":
        return OnlineReference(model_dir, device, autocast)
    if mode != "cached":
        raise ValueError(f"training.reference: expected 'cached' or 'online', got {mode!r}")
    if reference_dir is None:
        raise ValueError(f"objective {objective.name} needs the reference cache: pass --reference")
    return CachedReference(reference_dir, splits, device, per_token=per_token)
