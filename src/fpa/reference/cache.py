"""Exact reference cache: the frozen reference's full next-token distribution, stored small.

π_ref(·|x, y<t) = softmax(W_ref · z_ref,t) exactly, where z_ref,t is the reference's
final hidden state (after the final norm; ``lm_head(z)`` reproduces ``model(ids).logits``
bit for bit for Qwen2/Llama). So instead of V logits per token we store z_ref [d] in
bf16/fp16 (2·d bytes per token) and the head W_ref once; FPA recomputes
h_ref = z_ref·W_refᵀ chunk by chunk (``fpa.training.head``). The paper (§3.2) notes
h_ref "can be precomputed and cached for the fixed offline dataset".

Layout of a cache directory (written atomically with ``fpa.io.atomic_path``)::

    manifest.json                key, sizes, dtype, shard list, bytes per 1M tokens
    ids.json                     sample ids, in sample-index order
    index.safetensors            per sample: shard, start, length [S] int64; ref_logp [S] fp32
    head.safetensors             weight [V, d] (storage dtype if lossless, else fp32)
    hidden-00000.safetensors     hidden [T, d] storage dtype; ref_lse [T] fp32; targets [T] int32

Row t of a sample is the position predicting completion token t (position
prompt_len + t − 1 of ``encode_sample``'s ids). ``ref_lse`` is logsumexp(h_ref) and
``ref_logp`` the per-sample Σ_t log π_ref(y_t), both from the exact fp32 head over the
STORED (rounded) z_ref, so recomputing from the cache reproduces them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from torch import Tensor

from fpa.decoder.batch import collate
from fpa.decoder.packing import use_packed_attention
from fpa.io import atomic_path, read_json, sha256_path, write_json
from fpa.precision import CACHE_FORMATS, GATHER_FORMATS, autocast_dtype, torch_dtype, torch_name
from fpa.reference.model import online_reference_hidden, reference_head_weight
from fpa.samples.pad_token import pad_token_id
from fpa.samples.tokenize import encode_record

FORMAT_VERSION = 1


def _storage_dtype(name: str) -> torch.dtype:
    """The dtype z_ref is stored in (``fpa.precision.CACHE_FORMATS``)."""
    return torch_dtype(name, CACHE_FORMATS, "dtype")


def dataset_hash(samples: Sequence[dict]) -> str:
    """sha256 over the canonical JSON of (id, prompt, completion) of every sample, in order."""
    rows = [[s["id"], s["prompt"], s["completion"]] for s in samples]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()


def reference_cache_key(model_dir: str | os.PathLike, samples: Sequence[dict], *, max_length: int,
                        dtype: str = torch_name("bf16"), precision: str = "fp32",
                        weights_dtype: str = torch_name("fp32")) -> str:
    """Content key: sha256 over (format, dataset hash, model files hash, max_length, dtype, and the
    forward's precision and weights dtype).

    The tokenizer counts as a model file: keep it in ``model_dir``.
    """
    _storage_dtype(dtype)
    material = {"format": FORMAT_VERSION, "dataset": dataset_hash(samples), "model": sha256_path(model_dir),
                "max_length": int(max_length), "dtype": dtype, "precision": precision,
                "weights_dtype": weights_dtype}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _head_stats(z: Tensor, weight: Tensor, targets: Tensor, chunk: int = 1024) -> tuple[Tensor, Tensor]:
    """(logsumexp(h), log softmax(h)[y]) [N] fp32 with h = float32(z)·Wᵀ, chunk by chunk."""
    lse, logp = torch.empty(len(z)), torch.empty(len(z))
    for start in range(0, len(z), chunk):
        logits = z[start : start + chunk].float() @ weight.t()
        lse[start : start + chunk] = logits.logsumexp(-1)
        logp[start : start + chunk] = logits.gather(1, targets[start : start + chunk, None]).squeeze(1)
    return lse, logp - lse


class _ShardWriter:
    def __init__(self, directory: Path, shard_tokens: int):
        self.directory, self.shard_tokens = directory, shard_tokens
        self.names: list[str] = []
        self.pending: dict[str, list[Tensor]] = {"hidden": [], "ref_lse": [], "targets": []}
        self.pending_tokens = 0
        self.places: list[tuple[int, int, int]] = []  # (shard, start, length) per sample

    def add(self, hidden: Tensor, ref_lse: Tensor, targets: Tensor) -> None:
        self.places.append((len(self.names), self.pending_tokens, len(hidden)))
        for name, value in (("hidden", hidden), ("ref_lse", ref_lse), ("targets", targets.to(torch.int32))):
            self.pending[name].append(value.cpu())
        self.pending_tokens += len(hidden)
        if self.pending_tokens >= self.shard_tokens:
            self.flush()

    def flush(self) -> None:
        if not self.pending_tokens:
            return
        name = f"hidden-{len(self.names):05d}.safetensors"
        save_file({k: torch.cat(v).contiguous() for k, v in self.pending.items()}, str(self.directory / name))
        self.names.append(name)
        self.pending = {k: [] for k in self.pending}
        self.pending_tokens = 0


def write_reference_cache(model_dir: str | os.PathLike, samples: Sequence[dict], tokenizer,
                          out_dir: str | os.PathLike, *, max_length: int, dtype: str = torch_name("bf16"),
                          shard_tokens: int = 1 << 18, batch_size: int = 8, device: str = "cpu",
                          precision: str = "fp32", weights_dtype: str = torch_name("fp32"), packed: bool = False) -> dict:
    """Run the reference over every sample on ``device`` and write the cache; returns the manifest.

    The forward computes as the policy's does: its weights loaded in ``weights_dtype`` (float32, or
    bfloat16 where FSDP gathers the policy's in it), under the training's ``precision`` (bf16 autocast),
    each ``batch_size`` samples ``packed`` in one row without padding (``fpa.decoder.packing``) or padded.

    ``samples``: dicts with "id" (unique), "prompt", "completion". Tokenised with
    ``encode_sample``; a sample whose prompt leaves no completion raises ``ValueError``.
    """
    from transformers import AutoModelForCausalLM

    storage, autocast = _storage_dtype(dtype), autocast_dtype(precision)
    if not samples:
        raise ValueError("samples: expected at least one sample, got none")
    ids = [s["id"] for s in samples]
    if len(set(ids)) != len(ids):
        raise ValueError(f"samples: ids must be unique, got {len(ids) - len(set(ids))} duplicates")
    key = reference_cache_key(model_dir, samples, max_length=max_length, dtype=dtype, precision=precision,
                              weights_dtype=weights_dtype)
    encoded = [encode_record(tokenizer, s, max_length) for s in samples]
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch_dtype(weights_dtype, GATHER_FORMATS, "weights_dtype")).to(device).eval()
    if packed:
        use_packed_attention(model)
    head = reference_head_weight(model).detach().float()
    pad_id = pad_token_id(tokenizer)
    seq_logp = torch.empty(len(samples))
    with atomic_path(out_dir, directory=True) as tmp:
        writer = _ShardWriter(tmp, shard_tokens)
        for first in range(0, len(encoded), batch_size):
            batch = collate(encoded[first : first + batch_size], pad_id, packed)
            z = online_reference_hidden(model, batch, autocast).to(storage)
            targets = batch.targets.to(device)
            lse, logp = _head_stats(z, head, targets)
            bounds = torch.cumsum(batch.lengths, 0).tolist()
            for row, (end, length) in enumerate(zip(bounds, batch.lengths.tolist())):
                writer.add(z[end - length : end], lse[end - length : end], targets[end - length : end])
                seq_logp[first + row] = logp[end - length : end].double().sum().float()
        writer.flush()
        head_stored = head.to(storage) if torch.equal(head.to(storage).float(), head) else head
        save_file({"weight": head_stored.cpu().contiguous()}, str(tmp / "head.safetensors"))
        shard, start, length = (torch.tensor(column) for column in zip(*writer.places))
        save_file({"shard": shard, "start": start, "length": length, "ref_logp": seq_logp},
                  str(tmp / "index.safetensors"))
        write_json(tmp / "ids.json", ids)
        manifest = _manifest(tmp, writer.names, key, dtype, max_length, head, len(samples), int(length.sum()))
        manifest.update(model_dir=str(model_dir), head_dtype=str(head_stored.dtype).removeprefix("torch."),
                        precision=precision, weights_dtype=weights_dtype, device=str(device))
        write_json(tmp / "manifest.json", manifest)
    return manifest


def _manifest(directory: Path, shards: list[str], key: str, dtype: str, max_length: int, head: Tensor,
              num_samples: int, num_tokens: int) -> dict:
    hidden_bytes = sum((directory / name).stat().st_size for name in shards)
    return {
        "format": FORMAT_VERSION, "key": key, "dtype": dtype, "max_length": max_length,
        "vocab_size": head.shape[0], "hidden_size": head.shape[1],
        "num_samples": num_samples, "num_tokens": num_tokens, "shards": shards,
        "bytes": {"hidden_shards": hidden_bytes, "head": (directory / "head.safetensors").stat().st_size},
        "bytes_per_million_tokens": round(hidden_bytes / max(num_tokens, 1) * 1e6),
    }


@dataclass(frozen=True)
class CachedBatch:
    """Reference inputs of a batch of samples, concatenated in the order asked.

    hidden [N, d] (storage dtype), ref_lse [N] fp32, targets [N] long, lengths [B],
    ref_logp [B] fp32. Row order = ``completion_states(hidden_policy, batch)`` of ``fpa.decoder.batch``.
    """

    hidden: Tensor
    ref_lse: Tensor
    targets: Tensor
    lengths: Tensor
    ref_logp: Tensor


class ReferenceCache:
    """Read-only view of a cache directory; shards are memory-mapped (``safe_open``), not loaded.

    ``expected_key`` (from ``reference_cache_key``) guards against a stale cache. Pass
    ``ref_hidden=batch.hidden``, ``ref_weight=cache.head_weight()`` and
    ``ref_logsumexp=batch.ref_lse`` to ``fpa.training.head.token_statistics``; with the
    fp32 head this reproduces the cached ``ref_logp``.
    """

    def __init__(self, path: str | os.PathLike, expected_key: str | None = None):
        self.path = Path(path)
        self.manifest = read_json(self.path / "manifest.json")
        where = self.path / "manifest.json"
        if self.manifest.get("format") != FORMAT_VERSION:
            raise ValueError(f"{where}: format: expected {FORMAT_VERSION}, got {self.manifest.get('format')!r}")
        if expected_key is not None and self.manifest["key"] != expected_key:
            raise ValueError(f"{where}: key: expected {expected_key}, got {self.manifest['key']} (stale cache)")
        self.ids: list = read_json(self.path / "ids.json")
        self._row_of = {sample_id: row for row, sample_id in enumerate(self.ids)}
        self._index = load_file(str(self.path / "index.safetensors"))
        self._handles: dict[int, object] = {}

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def key(self) -> str:
        return self.manifest["key"]

    def indices(self, sample_ids: Sequence) -> list[int]:
        missing = [i for i in sample_ids if i not in self._row_of]
        if missing:
            raise ValueError(f"{self.path}: sample ids not in the cache: {missing[:5]}")
        return [self._row_of[i] for i in sample_ids]

    def head_weight(self, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu") -> Tensor:
        return load_file(str(self.path / "head.safetensors"))["weight"].to(device=device, dtype=dtype)

    def ref_logp(self, indices: Sequence[int]) -> Tensor:
        return self._index["ref_logp"][list(indices)]

    def lengths(self, indices: Sequence[int]) -> Tensor:
        return self._index["length"][list(indices)]

    def _rows(self, name: str, index: int) -> Tensor:
        shard = int(self._index["shard"][index])
        if shard not in self._handles:
            self._handles[shard] = safe_open(str(self.path / self.manifest["shards"][shard]), framework="pt")
        start, length = int(self._index["start"][index]), int(self._index["length"][index])
        return self._handles[shard].get_slice(name)[start : start + length]

    def hidden(self, indices: Sequence[int]) -> list[Tensor]:
        """z_ref [T_i, d] per sample, in the storage dtype."""
        return [self._rows("hidden", i) for i in indices]

    def batch(self, indices: Sequence[int]) -> CachedBatch:
        indices = list(indices)
        return CachedBatch(
            hidden=torch.cat(self.hidden(indices)),
            ref_lse=torch.cat([self._rows("ref_lse", i) for i in indices]),
            targets=torch.cat([self._rows("targets", i) for i in indices]).long(),
            lengths=self.lengths(indices),
            ref_logp=self.ref_logp(indices),
        )
