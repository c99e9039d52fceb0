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

import dataclasses
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor
from transformers import AutoModelForCausalLM

from fpa.objectives.base import Objective
from fpa.reference.cache import CachedBatch, ReferenceCache
from fpa.decoder.batch import Sequences, completion_states
from fpa.decoder.forward import decoder_hidden
from fpa.decoder.packing import decoder_inputs, use_packed_attention


@dataclass(frozen=True)
class ReferenceInputs:
    """hidden [N, d_ref] at the batch's completion positions, weight [V, d_ref], logsumexp [N] if cached;
    or only ``sequence_logp`` [B], log π_ref(y|x) per sample, for objectives that need no more."""

    hidden: Tensor | None
    weight: Tensor | None
    logsumexp: Tensor | None
    sequence_logp: Tensor | None = None


class CachedReference:
    """The cache's rows of each batch, read by one background thread: ``prefetch`` asks for the next
    batch's rows while the current step runs (into pinned memory on CUDA, so that ``inputs`` copies
    them without blocking); a batch not asked for ahead is read when needed, the same rows either way."""

    def __init__(self, cache_dir: str, splits: dict[str, list[dict]], device, *, per_token: bool):
        """``per_token``: the objective needs the reference's per-token distribution (z_ref, W_ref)."""
        self.cache = ReferenceCache(cache_dir)
        self.weight = self.cache.head_weight(torch.float32).to(device) if per_token else None
        self.splits = splits
        self.device = torch.device(device)
        # one thread: the cache's shard handles are opened lazily and are not shared between threads
        self.reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reference-prefetch")
        self.pending: dict[tuple[str, tuple[int, ...]], Future] = {}
        self.reads_waited = 0  # batches whose rows no one asked for ahead: read while the step waits

    def prefetch(self, sample_index: Sequence[int], split: str) -> None:
        """Start reading the rows of the batch of ``sample_index`` (indices into the split's samples)."""
        key = (split, tuple(sample_index))
        if key not in self.pending:
            self.pending[key] = self.reader.submit(self._read, key)

    def _read(self, key: tuple[str, tuple[int, ...]]) -> CachedBatch:
        split, sample_index = key
        samples = self.splits[split]
        indices = self.cache.indices([samples[i]["id"] for i in sample_index])
        if self.weight is None:
            rows = CachedBatch(None, None, None, self.cache.lengths(indices), self.cache.ref_logp(indices))
        else:
            rows = self.cache.batch(indices)
        if self.device.type != "cuda":
            return rows
        return CachedBatch(**{field.name: None if getattr(rows, field.name) is None else
                              getattr(rows, field.name).pin_memory() for field in dataclasses.fields(rows)})

    def rows(self, batch: Sequences, split: str) -> CachedBatch:
        """The cache's rows of ``batch``, on the host: prefetched, else read now."""
        key = (split, tuple(batch.sample_index.tolist()))
        self.reads_waited += key not in self.pending
        self.prefetch(key[1], split)
        return self.pending.pop(key).result()

    def inputs(self, batch: Sequences, split: str) -> ReferenceInputs:
        cached = self.rows(batch, split)
        copy = dict(device=self.device, non_blocking=True)
        if self.weight is None:
            if not torch.equal(cached.lengths, batch.lengths.cpu()):
                raise ValueError(f"{self.cache.path}: cached completion lengths differ from the training batch's "
                                 "(tokenizer or max_length changed since the cache was built)")
            return ReferenceInputs(None, None, None, cached.ref_logp.to(**copy))
        if not torch.equal(cached.targets, batch.targets.cpu()):
            raise ValueError(f"{self.cache.path}: cached tokens differ from the training batch's "
                             "(tokenizer or max_length changed since the cache was built)")
        return ReferenceInputs(cached.hidden.to(**copy), self.weight, cached.ref_lse.to(**copy))


class OnlineReference:
    """The reference body beside the policy, its forward in the policy's precision (``autocast``) and on its
    batches' layout (``packed``: the policy's packed attention, ``fpa.decoder.packing``)."""

    def __init__(self, model_dir: str, device, autocast: torch.dtype | None = None, packed: bool = False):
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).to(device).eval()
        self.model.requires_grad_(False)
        if packed:
            use_packed_attention(self.model)
        self.weight = self.model.get_output_embeddings().weight
        self.device, self.autocast = device, autocast

    def prefetch(self, sample_index: Sequence[int], split: str) -> None:
        """Nothing to read ahead: the reference body computes its rows inside the step."""

    @torch.no_grad()
    def inputs(self, batch: Sequences, split: str) -> ReferenceInputs:
        out = decoder_hidden(self.model, autocast=self.autocast, **decoder_inputs(batch, self.device))
        return ReferenceInputs(completion_states(out, batch), self.weight, None)


def make_reference(objective: Objective, mode: str, *, reference_dir: str | None, model_dir: str,
                   train_samples: list[dict], val_samples: list[dict], device, diagnostics: bool = False,
                   autocast: torch.dtype | None = None, packed: bool = False):
    splits = {"train": train_samples, "val": val_samples}
    per_token = bool({"hat", "fwd_kl"} & set(objective.requires))
    if not objective.needs_reference:
        if diagnostics and mode == "cached" and reference_dir is not None:
            return CachedReference(reference_dir, splits, device, per_token=False)
        return None
    if mode == "online":
        return OnlineReference(model_dir, device, autocast, packed)
    if mode != "cached":
        raise ValueError(f"training.reference: expected 'cached' or 'online', got {mode!r}")
    if reference_dir is None:
        raise ValueError(f"objective {objective.name} needs the reference cache: pass --reference")
    return CachedReference(reference_dir, splits, device, per_token=per_token)
