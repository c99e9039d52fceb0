"""One chunk of the loss head (``fpa.training.head``): its [c, d]×[d, V] products and its passes over
the [c, V] logits, eager and in place, or as one expression for ``torch.compile``.

Symbols as in ``fpa.training.head``: h_θ = z_θ·Wᵀ, h_ref = z_ref·W_refᵀ, y the targets, λ FPA's
extrapolation; lse a row's logsumexp.
"""

from __future__ import annotations

import functools

import torch
from torch import Tensor


def product(a: Tensor, b: Tensor, acc: torch.dtype, out: Tensor | None = None) -> Tensor:
    """a·b, products in a's and b's dtype, sums and result in ``acc``: bf16 inputs give fp32 logits, not
    logits rounded to bf16 (autocast's lm_head rounds them: up to 2^-9 of a logit, the largest error of a
    bf16 head). CUDA's ``out_dtype``; the CPU, which lacks it, takes the bf16 values upcast, whose
    products are exact in fp32: the same sums up to their order."""
    if a.dtype == acc:
        return torch.mm(a, b, out=out)
    if a.is_cuda and acc == torch.float32:
        return torch.mm(a, b, out_dtype=acc) if out is None else torch.mm(a, b, out_dtype=acc, out=out)
    return torch.mm(a.to(acc), b.to(acc), out=out)


def add_product(out: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """out += a·b in place, in ``product``'s precision (products in a's and b's dtype, sums in out's),
    without an [m, n] temporary: the head's ∂L/∂W accumulator [V, d] (1.5 GB in fp32 at Qwen3's V) takes
    each chunk's product where it lies. CUDA's ``addmm`` with ``out_dtype``; the CPU upcasts as ``product``."""
    if a.dtype == out.dtype:
        return out.addmm_(a, b)
    if a.is_cuda and out.dtype == torch.float32:
        return torch.addmm(out, a, b, out_dtype=out.dtype, out=out)
    return out.addmm_(a.to(out.dtype), b.to(out.dtype))


def logits_into(out: Tensor, rows: Tensor, weight: Tensor) -> Tensor:
    """out[:c] = rows·Wᵀ, the products in W's dtype (as ``lm_head`` would), the sums in out's."""
    return product(rows.to(weight.dtype), weight.t(), out.dtype, out=out[: rows.shape[0]])


def logsumexp(x: Tensor, out: Tensor | None = None) -> Tensor:
    """Row-wise logsumexp of ``x`` [c, V]; ``out`` (default: ``x`` itself) is overwritten."""
    top = x.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    out = x.sub_(top) if out is None else torch.sub(x, top, out=out[: x.shape[0]])
    return out.exp_().sum(dim=-1).log_().add_(top.squeeze(-1))


def matmul_dtype(weight: Tensor, head_precision: str) -> torch.dtype:
    """The dtype of the head's products: bf16 for ``bf16``, else fp32 (a weight FSDP gathered in bf16
    too), fp64 for an fp64 weight (the checks)."""
    if head_precision == "bf16":
        return torch.bfloat16
    return torch.float64 if weight.dtype == torch.float64 else torch.float32


def policy_dtype(hidden: Tensor, ref_hidden: Tensor | None, lam: float | None) -> torch.dtype:
    """The dtype the policy's hidden states are rounded to before the head: the reference's for FPA
    with a reference stored in a narrower dtype (the bf16 cache), else their own.

    π̂'s h_θ − h_ref is then taken between equally rounded hidden states, so at step 0 (θ = ref) it is
    exactly 0 and π̂ = π_θ, not π_θ moved by λ times the rounding of z_ref; and log π_θ takes the same
    rounded states, so FPA pays no product beyond Off-RL's but the reference's. Under bf16 products
    the rounding is the one the product makes anyway; under fp32 and TF32 FPA's log π_θ would see z_θ in
    bf16 and Off-RL's, without a reference, would not: FPA at λ = 0 would part from Off-RL by that rounding.
    So the workflow stores the cache in the products' input precision (``reference_cache_dtype`` of
    ``fpa.memory.training``: fp32 under fp32 and TF32 products), and this rounding is left to a cache made
    narrower by hand (``fpa cache-reference --dtype``).
    """
    if ref_hidden is None or lam is None or ref_hidden.dtype.itemsize >= hidden.dtype.itemsize:
        return hidden.dtype
    return ref_hidden.dtype


def pick(x: Tensor, targets: Tensor) -> Tensor:
    return x.gather(1, targets[:, None]).squeeze(1)


def chunk_in_place(logits: Tensor, ref: Tensor | None, y: Tensor, ref_lse: Tensor | None, lam: float | None,
                    want_kl: bool, scratch: Tensor | None) -> dict[str, Tensor]:
    """One chunk's statistics by eager passes over [c, V], in place over ``logits`` and ``ref`` (``scratch``
    when h_ref is still needed): lse, logp and, with ``ref``, ref_lse, ref_logp, hat_logp, kl (the
    KL's lse terms are added after the loop)."""
    values = {"logp": pick(logits, y)}
    if ref is not None:
        ref_lse = logsumexp(ref, out=scratch) if ref_lse is None else ref_lse
        values["ref_lse"], values["ref_logp"] = ref_lse, pick(ref, y) - ref_lse
        if lam is not None:  # (1+λ)h_θ − λh_ref = lerp(h_ref, h_θ, 1+λ): one pass, in place over h_ref
            hat = (torch.lerp(ref, logits, 1.0 + lam, out=scratch[: len(y)]) if want_kl  # KL needs h_ref
                   else ref.lerp_(logits, 1.0 + lam))
            values["hat_logp"] = pick(hat, y) - logsumexp(hat)
        if want_kl:  # Σ q·(h_ref − h_θ) with q = exp(h_ref − lse_ref)
            diff = torch.sub(ref, logits, out=scratch[: len(y)])
            values["kl"] = ref.sub_(ref_lse[:, None]).exp_().mul_(diff).sum(-1)
    values["lse"] = logsumexp(logits)
    values["logp"] = values["logp"] - values["lse"]
    return values


def chunk_fused(logits: Tensor, ref: Tensor | None, y: Tensor, ref_lse: Tensor | None,
                 lam: float | None) -> dict[str, Tensor]:
    """The same statistics as pure expressions (no KL; ``ref_lse`` given with ``ref``), for ``torch.compile``:
    Inductor fuses the pick, the max and the exp-sum of each logsumexp and π̂'s lerp into one kernel per
    row block reading h_θ and h_ref once each, with no [c, V] temporary (hat is never stored)."""
    lse = torch.logsumexp(logits, -1)
    values = {"lse": lse, "logp": pick(logits, y) - lse}
    if ref is not None:
        values["ref_lse"], values["ref_logp"] = ref_lse, pick(ref, y) - ref_lse
        if lam is not None:
            hat = torch.lerp(ref, logits, 1.0 + lam)
            values["hat_logp"] = pick(hat, y) - torch.logsumexp(hat, -1)
    return values


@functools.cache
def compiled_chunk():
    """``chunk_fused`` compiled once per process; dynamic in the chunk's rows (the last chunk is shorter)."""
    return torch.compile(chunk_fused, dynamic=True)
