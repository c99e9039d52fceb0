"""Per-token statistics of the output head, without full-vocabulary logits for all rows.

FPA (paper §3.2, Eq. 4) needs, at every completion token t,

    log π̂_λ(y_t) = log_softmax((1+λ)·h_θ − λ·h_ref)[y_t],   h = z·Wᵀ ∈ R^V,

besides log π_θ(y_t) (with gradient), log π_ref(y_t) and optionally the forward
KL(π_ref ‖ π_θ) (with gradient). With V = 151,936 a [N, V] fp32 tensor is 0.6 GB
per 1k tokens, so ``token_statistics`` walks the rows in chunks and keeps only a
few [chunk, V] fp32 buffers alive, in forward and in backward.

Symbols and shapes: N completion-predicting positions, d (d_ref) hidden size of the
policy (reference), V vocabulary. ``hidden`` [N, d] final hidden states after the
final norm, ``weight`` [V, d] the output head (possibly tied to the embeddings),
``targets`` [N] long, ``ref_hidden`` [N, d_ref], ``ref_weight`` [V, d_ref] (frozen).
p = softmax(h_θ), q = softmax(h_ref).

Why recompute in backward instead of Liger's gradients-in-forward: Liger's fused
losses know the scalar loss inside the kernel, so dL/dlogits is known in forward.
Here the loss is an objective applied later to ``SequenceStats`` (``fpa.objectives``),
so the upstream gradients g_logp, g_kl are unknown until backward, and
∂L/∂W = Σ_i grad_logits_iᵀ·z_i needs p_i weighted by those per-row g. The price is
one extra [chunk, d]×[d, V] matmul per chunk in backward (and one for h_ref when
the KL gradient is used).

Call tree::

    token_statistics(hidden, weight, targets, ref_hidden=, ref_weight=, lam=, want_kl=, ref_logsumexp=, fused=)
    └── _TokenStatsFunction.apply
        ├── forward: for each chunk of c rows
        │   ├── logits_into(h_θ)                        [c, V] fp32 buffer   (z_θ rounded as z_ref for FPA)
        │   ├── logits_into(h_ref)                      [c, V] fp32 buffer   (if ref)
        │   └── chunk_in_place, or compiled chunk_fused (if fused, no KL, ref_logsumexp given):
        │   │   ├── lse_ref = logsumexp(h_ref)  (skipped if ref_logsumexp) → ref_logp
        │   │   ├── hat = (1+λ)h_θ − λh_ref → logsumexp → hat_logp   (if lam)
        │   │   └── kl = Σ q·(h_ref − h_θ) − lse_ref + lse_θ          (if want_kl)
        │   └── lse_θ = logsumexp(h_θ) → logp
        │   saves hidden, weight, targets, ref tensors, lse_θ, lse_ref [N]  (nothing [N, V])
        └── backward: for each chunk of c rows
            ├── p = exp(logits_into(h_θ) − lse_θ)
            ├── G = g_logp·(onehot − p) + g_kl·(p − q)   (h_ref, q recomputed only if g_kl)
            ├── grad_hidden[rows] = G·W
            └── grad_W += Gᵀ·hidden[rows]                (fp32 accumulator, in place: add_product)
    token_statistics_naive(...)   same outputs by plain autograd over [N, V] tensors

Only ``logp`` and ``fwd_kl`` carry gradients (to ``hidden`` and ``weight``);
``ref_logp`` and ``hat_logp`` are detached (FPA uses sg[π̂]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from fpa.training.head_chunk import (
    add_product,
    chunk_in_place,
    compiled_chunk,
    logits_into,
    matmul_dtype,
    pick,
    policy_dtype,
    product,
)
from fpa.memory.training import head_buffers
from fpa.training.precision import HEAD_PRECISION_CHOICES, head_matmuls, resolve_head_precision


@dataclass(frozen=True)
class TokenStats:
    """Per-token statistics, all [N] float32 (float64 when the weight is float64).

    Attributes:
      logp: log π_θ(y_t | ·); carries gradient.
      ref_logp: log π_ref(y_t | ·); no gradient. None without a reference.
      hat_logp: log π̂_λ(y_t | ·); no gradient. None unless ``lam`` is given.
      fwd_kl: KL(π_ref(·|·) ‖ π_θ(·|·)); carries gradient. None unless ``want_kl``.
    """

    logp: Tensor
    ref_logp: Tensor | None = None
    hat_logp: Tensor | None = None
    fwd_kl: Tensor | None = None


class _TokenStatsFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, ref_hidden, ref_weight, ref_lse_in, lam, want_kl, chunk, precision,
                fused):
        with head_matmuls(precision):
            return _TokenStatsFunction._forward(ctx, hidden, weight, targets, ref_hidden, ref_weight, ref_lse_in,
                                                lam, want_kl, chunk, precision, fused)

    @staticmethod
    def _forward(ctx, hidden, weight, targets, ref_hidden, ref_weight, ref_lse_in, lam, want_kl, chunk, precision,
                 fused):
        n, vocab, dev = hidden.shape[0], weight.shape[0], hidden.device
        has_ref = ref_hidden is not None
        acc = torch.float64 if weight.dtype == torch.float64 else torch.float32
        names = ("logp", "lse", "ref_logp", "ref_lse", "hat_logp", "kl")
        out = {name: torch.zeros(n, dtype=acc, device=dev) for name in names}
        rounding = policy_dtype(hidden, ref_hidden, lam)
        held = head_buffers(has_ref, ref_lse_in is not None, want_kl)
        logits_buf, ref_buf, scratch = (torch.empty(min(chunk, n), vocab, dtype=acc, device=dev) if i < held else None
                                        for i in range(3))
        matmul = matmul_dtype(weight, precision)
        weight_mm = weight.detach().to(matmul)
        ref_weight_mm = ref_weight.to(matmul) if has_ref else None
        fuse = fused and not want_kl and (not has_ref or ref_lse_in is not None)
        for start in range(0, n, chunk):
            rows, y = slice(start, start + chunk), targets[start : start + chunk]
            logits = logits_into(logits_buf, hidden[rows].to(rounding), weight_mm)
            ref = logits_into(ref_buf, ref_hidden[rows], ref_weight_mm) if has_ref else None
            ref_lse = None if ref_lse_in is None else ref_lse_in[rows].to(acc)
            chunk_values = (compiled_chunk()(logits, ref, y, ref_lse, lam) if fuse
                            else chunk_in_place(logits, ref, y, ref_lse, lam, want_kl, scratch))
            for name, value in chunk_values.items():
                out[name][rows] = value
        out["kl"] += out["lse"] - out["ref_lse"]
        ctx.save_for_backward(hidden, weight, targets, ref_hidden, ref_weight, out["lse"], out["ref_lse"])
        ctx.chunk, ctx.precision, ctx.rounding = chunk, precision, rounding
        ctx.set_materialize_grads(False)
        ref_logp = out["ref_logp"] if has_ref else None
        hat_logp = out["hat_logp"] if lam is not None else None
        kl = out["kl"] if want_kl else None
        ctx.mark_non_differentiable(*(t for t in (ref_logp, hat_logp) if t is not None))
        return out["logp"], ref_logp, hat_logp, kl

    @staticmethod
    def backward(ctx, g_logp, g_ref, g_hat, g_kl):
        with head_matmuls(ctx.precision):
            return _TokenStatsFunction._backward(ctx, g_logp, g_kl)

    @staticmethod
    def _backward(ctx, g_logp, g_kl):
        hidden, weight, targets, ref_hidden, ref_weight, lse, ref_lse = ctx.saved_tensors
        need_h, need_w = ctx.needs_input_grad[:2]
        if g_logp is None and g_kl is None or not (need_h or need_w):
            return (None,) * 11
        matmul = matmul_dtype(weight, ctx.precision)
        weight_mm = weight.to(matmul)
        ref_weight_mm = ref_weight.to(matmul) if ref_weight is not None else None
        n, vocab, chunk = hidden.shape[0], weight.shape[0], ctx.chunk
        g_logp = torch.zeros_like(lse) if g_logp is None else g_logp.to(lse.dtype)
        coef_p = -g_logp if g_kl is None else g_kl.to(lse.dtype) - g_logp
        grad_hidden = torch.empty_like(hidden) if need_h else None
        grad_weight = torch.zeros(weight.shape, dtype=lse.dtype, device=weight.device) if need_w else None
        p_buf, q_buf = (torch.empty(min(chunk, n), vocab, dtype=lse.dtype, device=hidden.device)
                        if i == 0 or g_kl is not None else None for i in range(2))
        for start in range(0, n, chunk):
            rows, y = slice(start, start + chunk), targets[start : start + chunk]
            policy_rows = hidden[rows].to(ctx.rounding)
            p = logits_into(p_buf, policy_rows, weight_mm).sub_(lse[rows, None]).exp_()
            grad = p.mul_(coef_p[rows, None])  # g_logp·(−p) + g_kl·p
            if g_kl is not None:  # − g_kl·q
                q = logits_into(q_buf, ref_hidden[rows], ref_weight_mm).sub_(ref_lse[rows, None]).exp_()
                grad.addcmul_(q, g_kl[rows, None].to(q.dtype), value=-1.0)
            grad.scatter_add_(1, y[:, None], g_logp[rows, None])  # + g_logp·onehot
            grad = grad.to(matmul)
            if need_h:
                grad_hidden[rows] = product(grad, weight_mm, lse.dtype)
            if need_w:  # half-precision products: fp32 sums within and across chunks, in place
                add_product(grad_weight, grad.t(), policy_rows.to(matmul))
        grad_weight = grad_weight.to(weight.dtype) if need_w else None
        return grad_hidden, grad_weight, *(None,) * 9


def _check(hidden, weight, targets, ref_hidden, ref_weight, ref_logsumexp, lam, want_kl, chunk_size,
           head_precision="fp32") -> None:
    if head_precision not in HEAD_PRECISION_CHOICES:
        raise ValueError(f"head_precision: expected one of {list(HEAD_PRECISION_CHOICES)}, got {head_precision!r}")
    if hidden.dim() != 2 or weight.dim() != 2 or hidden.shape[1] != weight.shape[1]:
        raise ValueError(
            f"hidden [N, d] and weight [V, d] expected, got {tuple(hidden.shape)} and {tuple(weight.shape)}"
        )
    if targets.shape != hidden.shape[:1] or targets.dtype != torch.long:
        raise ValueError(
            f"targets: expected long of shape ({hidden.shape[0]},), got {targets.dtype} {tuple(targets.shape)}"
        )
    if targets.numel() and not 0 <= int(targets.min()) <= int(targets.max()) < weight.shape[0]:
        low, high = int(targets.min()), int(targets.max())
        raise ValueError(f"targets: expected ids in [0, {weight.shape[0]}), got [{low}, {high}]")
    if (ref_hidden is None) != (ref_weight is None):
        raise ValueError("ref_hidden and ref_weight must be given together")
    if ref_hidden is None and (lam is not None or want_kl or ref_logsumexp is not None):
        raise ValueError("lam, want_kl and ref_logsumexp need the reference (ref_hidden, ref_weight)")
    if ref_hidden is not None:
        if ref_hidden.shape[0] != hidden.shape[0] or ref_weight.shape != (weight.shape[0], ref_hidden.shape[1]):
            raise ValueError(
                f"ref_hidden [N={hidden.shape[0]}, d_ref] and ref_weight [V={weight.shape[0]}, d_ref] expected, "
                f"got {tuple(ref_hidden.shape)} and {tuple(ref_weight.shape)}"
            )
    if ref_logsumexp is not None and ref_logsumexp.shape != hidden.shape[:1]:
        raise ValueError(f"ref_logsumexp: expected shape ({hidden.shape[0]},), got {tuple(ref_logsumexp.shape)}")
    if lam is not None and not (isinstance(lam, (int, float)) and math.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam: expected a finite number >= 0, got {lam!r}")
    if not (isinstance(chunk_size, int) and chunk_size >= 1):
        raise ValueError(f"chunk_size: expected an int >= 1, got {chunk_size!r}")


def token_statistics(hidden: Tensor, weight: Tensor, targets: Tensor, *, ref_hidden: Tensor | None = None,
                     ref_weight: Tensor | None = None, lam: float | None = None, want_kl: bool = False,
                     chunk_size: int = 1024, ref_logsumexp: Tensor | None = None,
                     head_precision: str = "fp32", fused: bool = False) -> TokenStats:
    """Chunked per-token log-probabilities (see the module docstring for the call tree).

    ``head_precision`` (``fpa.training.precision.HEAD_PRECISION_CHOICES``): the products' precision,
    ``auto`` resolved on ``hidden``'s device (``resolve_head_precision``); softmax and sums stay fp32.
    With a reference stored in half precision (the cache) and ``lam``,
    the policy's hidden states are rounded alike before the head (``fpa.training.head_chunk.policy_dtype``): FPA pays one
    [N, d]×[d, V] product beyond Off-RL's, the reference's, in forward, and none in backward.

    Peak extra memory: [chunk_size, V] fp32 buffers: in forward ``fpa.memory.training.head_buffers`` (1 without
    a reference, 2 with ``ref_logsumexp`` and no KL, else 3); in backward 1 (2 if the KL gradient
    is used), plus ∂L/∂W in fp32 (one [V, d], each chunk's product added in place).
    ``ref_logsumexp`` [N] (optional, e.g. from ``ReferenceCache``) is the reference
    log-normaliser logsumexp(h_ref); given, it saves one exp pass over [N, V].
    The reference is treated as a constant (no gradient to it).
    ``fused``: each chunk's passes (pick, logsumexp, π̂'s lerp) as one ``torch.compile``d expression
    (``fpa.training.head_chunk.chunk_fused``) for Off-RL's and FPA's calls (no KL, ``ref_logsumexp`` given with a reference);
    the others, and the default, take the eager in-place passes. The backward is the same.
    """
    _check(hidden, weight, targets, ref_hidden, ref_weight, ref_logsumexp, lam, want_kl, chunk_size, head_precision)
    if ref_hidden is not None:
        ref_hidden, ref_weight = ref_hidden.detach(), ref_weight.detach()
    if ref_logsumexp is not None:
        ref_logsumexp = ref_logsumexp.detach()
    lam = None if lam is None else float(lam)
    head_precision = resolve_head_precision(head_precision, hidden.device)
    logp, ref_logp, hat_logp, kl = _TokenStatsFunction.apply(
        hidden, weight, targets, ref_hidden, ref_weight, ref_logsumexp, lam, bool(want_kl), chunk_size, head_precision,
        bool(fused),
    )
    return TokenStats(logp, ref_logp, hat_logp, kl)


def token_statistics_naive(hidden: Tensor, weight: Tensor, targets: Tensor, *, ref_hidden: Tensor | None = None,
                           ref_weight: Tensor | None = None, lam: float | None = None, want_kl: bool = False,
                           chunk_size: int = 1024, ref_logsumexp: Tensor | None = None,
                           head_precision: str = "fp32", fused: bool = False) -> TokenStats:
    """Plain-autograd reference for ``token_statistics``; materialises [N, V] tensors.

    ``chunk_size`` and ``fused`` are accepted for signature compatibility and ignored.
    """
    _check(hidden, weight, targets, ref_hidden, ref_weight, ref_logsumexp, lam, want_kl, chunk_size, head_precision)
    head_precision = resolve_head_precision(head_precision, hidden.device)
    acc = torch.float64 if weight.dtype == torch.float64 else torch.float32
    matmul = matmul_dtype(weight, head_precision)
    rounded = hidden.detach().to(policy_dtype(hidden, ref_hidden, lam)).to(hidden.dtype)
    policy = hidden + (rounded - hidden.detach())  # = rounded, exactly; the gradient passes straight through
    logits = product(policy.to(matmul), weight.to(matmul).t(), acc)
    logprobs = logits.log_softmax(-1)
    stats = {"logp": pick(logprobs, targets)}
    if ref_hidden is not None:
        ref_logits = product(ref_hidden.detach().to(matmul), ref_weight.detach().to(matmul).t(), acc)
        lse = ref_logits.logsumexp(-1) if ref_logsumexp is None else ref_logsumexp.detach().to(acc)
        ref_logprobs = ref_logits - lse[:, None]
        stats["ref_logp"] = pick(ref_logprobs, targets)
        if lam is not None:
            hat = ((1 + lam) * logits.detach() - lam * ref_logits).log_softmax(-1)
            stats["hat_logp"] = pick(hat, targets)
        if want_kl:
            stats["fwd_kl"] = (ref_logprobs.exp() * (ref_logprobs - logprobs)).sum(-1)
    return TokenStats(**stats)
