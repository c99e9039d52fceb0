"""Chunked loss head == plain autograd over [N, V] logits, in values and gradients."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from fpa.objectives import get_objective
from fpa.training.head import token_statistics, token_statistics_naive
from fpa.memory.training import head_buffers, objective_head_buffers
from fpa.training.head_chunk import add_product, product

N, V, D, D_REF = 37, 123, 16, 12
CONFIGS = {
    "logp": {},
    "ref": {"ref": True},
    "fpa": {"ref": True, "lam": 1.5},
    "fpa_kl": {"ref": True, "lam": 2.0, "want_kl": True},
    "kl": {"ref": True, "want_kl": True},
}


def make_inputs(dtype=torch.float64, seed=0, n=N):
    gen = torch.Generator().manual_seed(seed)
    randn = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64)  # noqa: E731
    return {
        "hidden": (randn(n, D) * 2).to(dtype).requires_grad_(),
        "weight": (randn(V, D) / 2).to(dtype).requires_grad_(),
        "targets": torch.randint(0, V, (n,), generator=gen),
        "ref_hidden": (randn(n, D_REF) * 2).to(dtype),
        "ref_weight": (randn(V, D_REF) / 2).to(dtype),
        "g": randn(2, n),
    }


def run(fn, inputs, ref=False, lam=None, want_kl=False, chunk_size=1024, **extra):
    kwargs = {"ref_hidden": inputs["ref_hidden"], "ref_weight": inputs["ref_weight"]} if ref else {}
    stats = fn(inputs["hidden"], inputs["weight"], inputs["targets"], lam=lam, want_kl=want_kl,
               chunk_size=chunk_size, **kwargs, **extra)
    g_logp, g_kl = inputs["g"].to(stats.logp.dtype)
    loss = (g_logp * stats.logp).sum() + ((g_kl * stats.fwd_kl).sum() if want_kl else 0.0)
    grads = torch.autograd.grad(loss, (inputs["hidden"], inputs["weight"]))
    return stats, grads


def assert_same(a, b, **tol):
    stats_a, grads_a = a
    stats_b, grads_b = b
    for name in ("logp", "ref_logp", "hat_logp", "fwd_kl"):
        x, y = getattr(stats_a, name), getattr(stats_b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            torch.testing.assert_close(x, y, **tol, msg=lambda m: f"{name}: {m}")
    for name, x, y in zip(("grad_hidden", "grad_weight"), grads_a, grads_b):
        torch.testing.assert_close(x, y, **tol, msg=lambda m: f"{name}: {m}")


@pytest.mark.parametrize("chunk_size", [1, 5, 16, 37, 64])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_matches_naive_float64(config, chunk_size):
    inputs = make_inputs()
    chunked = run(token_statistics, inputs, chunk_size=chunk_size, **CONFIGS[config])
    naive = run(token_statistics_naive, inputs, **CONFIGS[config])
    assert chunked[0].logp.dtype == torch.float64
    assert_same(chunked, naive, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_matches_naive_low_precision(dtype):
    inputs = make_inputs(dtype)
    chunked = run(token_statistics, inputs, chunk_size=8, **CONFIGS["fpa_kl"])
    naive = run(token_statistics_naive, inputs, **CONFIGS["fpa_kl"])
    assert chunked[0].logp.dtype == torch.float32 and chunked[1][1].dtype == dtype
    tol = {"atol": 2e-2, "rtol": 1.6e-2} if dtype == torch.bfloat16 else {"atol": 1e-4, "rtol": 1e-4}
    assert_same(chunked, naive, **tol)


def test_lambda_zero_is_current_policy():
    inputs = make_inputs()
    stats = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"], ref_hidden=inputs["ref_hidden"],
                             ref_weight=inputs["ref_weight"], lam=0.0, chunk_size=10)
    torch.testing.assert_close(stats.hat_logp, stats.logp.detach(), atol=1e-12, rtol=0)
    assert not stats.hat_logp.requires_grad and not stats.ref_logp.requires_grad


def test_hat_is_normalised_power_product():
    inputs, lam = make_inputs(), 1.7
    stats = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"], ref_hidden=inputs["ref_hidden"],
                             ref_weight=inputs["ref_weight"], lam=lam, chunk_size=6)
    p = (inputs["hidden"] @ inputs["weight"].T).softmax(-1).detach()
    q = (inputs["ref_hidden"] @ inputs["ref_weight"].T).softmax(-1)
    unnormalised = p ** (1 + lam) * q ** (-lam)
    hat = unnormalised / unnormalised.sum(-1, keepdim=True)
    expected = hat.gather(1, inputs["targets"][:, None]).squeeze(1).log()
    torch.testing.assert_close(stats.hat_logp, expected, atol=1e-10, rtol=1e-10)


def test_forward_kl_definition():
    inputs = make_inputs()
    stats = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"], ref_hidden=inputs["ref_hidden"],
                             ref_weight=inputs["ref_weight"], want_kl=True, chunk_size=7)
    log_p = (inputs["hidden"] @ inputs["weight"].T).log_softmax(-1).detach()
    log_q = (inputs["ref_hidden"] @ inputs["ref_weight"].T).log_softmax(-1)
    expected = (log_q.exp() * (log_q - log_p)).sum(-1)
    assert (stats.fwd_kl >= 0).all()
    torch.testing.assert_close(stats.fwd_kl.detach(), expected, atol=1e-10, rtol=1e-10)
    # π_θ = π_ref gives zero KL and ref_logp == logp
    same = token_statistics(inputs["ref_hidden"], inputs["ref_weight"], inputs["targets"],
                            ref_hidden=inputs["ref_hidden"], ref_weight=inputs["ref_weight"], want_kl=True)
    torch.testing.assert_close(same.fwd_kl, torch.zeros(N, dtype=torch.float64), atol=1e-12, rtol=0)
    torch.testing.assert_close(same.ref_logp, same.logp, atol=1e-12, rtol=0)


def test_tied_weight_gets_both_gradients():
    gen = torch.Generator().manual_seed(3)
    embedding = torch.randn(V, D, generator=gen, dtype=torch.float64, requires_grad=True)
    ids = torch.randint(0, V, (N,), generator=gen)
    targets = torch.randint(0, V, (N,), generator=gen)
    mix = torch.randn(D, D, generator=gen, dtype=torch.float64)

    def grad_of(fn):
        hidden = torch.tanh(embedding[ids] @ mix)  # the embedding feeds the body ...
        stats = fn(hidden, embedding, targets, chunk_size=4)  # ... and is the output head
        (grad,) = torch.autograd.grad(stats.logp.sum(), embedding)
        return grad

    torch.testing.assert_close(grad_of(token_statistics), grad_of(token_statistics_naive), atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("used", ["logp", "kl"])
def test_unused_output_gradients(used):
    inputs = make_inputs()
    for fn in (token_statistics, token_statistics_naive):
        stats = fn(inputs["hidden"], inputs["weight"], inputs["targets"], ref_hidden=inputs["ref_hidden"],
                   ref_weight=inputs["ref_weight"], want_kl=True, chunk_size=9)
        loss = (stats.logp if used == "logp" else stats.fwd_kl).pow(2).sum()
        (grad,) = torch.autograd.grad(loss, inputs["hidden"])
        if fn is token_statistics:
            chunked = grad
    torch.testing.assert_close(chunked, grad, atol=1e-10, rtol=1e-10)


@pytest.mark.parametrize("config", ["ref", "fpa", "fpa_kl"])
def test_cached_ref_logsumexp_matches(config):
    inputs = make_inputs()
    ref_lse = (inputs["ref_hidden"] @ inputs["ref_weight"].T).logsumexp(-1)
    given = run(token_statistics, inputs, chunk_size=11, ref_logsumexp=ref_lse, **CONFIGS[config])
    assert_same(given, run(token_statistics, inputs, chunk_size=11, **CONFIGS[config]), atol=1e-10, rtol=1e-10)
    assert_same(given, run(token_statistics_naive, inputs, ref_logsumexp=ref_lse, **CONFIGS[config]),
                atol=1e-10, rtol=1e-10)


def test_saves_no_full_vocabulary_tensor():
    inputs, saved = make_inputs(n=40), []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t.shape) or t, lambda t: t):
        run(token_statistics, inputs, chunk_size=8, **CONFIGS["fpa_kl"])
    assert saved and all(shape.numel() < 40 * V for shape in saved), saved  # weight [V, D] is 1968 < 40·V


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"lam": 1.0}, "need the reference"),
        ({"want_kl": True}, "need the reference"),
        ({"ref": True, "lam": -0.5}, "lam: expected a finite number >= 0, got -0.5"),
        ({"chunk_size": 0}, "chunk_size: expected an int >= 1, got 0"),
    ],
)
def test_errors(kwargs, match):
    inputs = make_inputs()
    with pytest.raises(ValueError, match=match):
        run(token_statistics, inputs, **kwargs)


def test_bad_targets():
    inputs = make_inputs()
    with pytest.raises(ValueError, match=r"targets: expected ids in \[0, 123\)"):
        token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"] + V)


@pytest.mark.parametrize("head_precision", ["fp32", "tf32", "bf16"])
def test_head_precision_sets_the_products_and_matches_naive(head_precision):
    """``head_precision``: tf32 turns CUDA's TF32 matmuls on inside the head only (exact on CPU); bf16
    takes the products in bf16 (the naive head alike), softmax and sums in fp32 either way."""
    from fpa.training.precision import head_matmuls

    before = torch.backends.cuda.matmul.fp32_precision
    with head_matmuls(head_precision):
        inside = torch.backends.cuda.matmul.fp32_precision
    assert inside == ("tf32" if head_precision == "tf32" else "ieee")
    assert torch.backends.cuda.matmul.fp32_precision == before
    inputs = make_inputs(torch.float32)
    chunked = run(token_statistics, inputs, chunk_size=8, head_precision=head_precision, **CONFIGS["fpa_kl"])
    naive = run(token_statistics_naive, inputs, head_precision=head_precision, **CONFIGS["fpa_kl"])
    assert chunked[0].logp.dtype == torch.float32
    tol = {"atol": 2e-2, "rtol": 1.6e-2} if head_precision == "bf16" else {"atol": 1e-4, "rtol": 1e-4}
    assert_same(chunked, naive, **tol)
    if head_precision == "bf16":
        exact = run(token_statistics, inputs, chunk_size=8, **CONFIGS["fpa_kl"])
        assert not torch.equal(chunked[0].logp, exact[0].logp)


@pytest.mark.parametrize("head_precision", ["fp32", "tf32", "bf16"])
def test_policy_rounded_like_a_bf16_reference_matches_naive_and_is_exact_at_step_zero(head_precision):
    """FPA with an fp32 policy and a bf16-cached reference: log π_θ and π̂ both take z_θ rounded to bf16
    (one product for both), gradients straight through the rounding, as the naive head computes it;
    at θ = ref π̂ = π_θ bit for bit, and Off-RL's call (no reference) keeps z_θ unrounded."""
    inputs = make_inputs(torch.float32)
    inputs["ref_hidden"] = (inputs["hidden"].detach() + 0.1).to(torch.bfloat16)
    inputs["ref_weight"] = (inputs["weight"].detach() + 0.01).narrow(1, 0, D)
    chunked = run(token_statistics, inputs, chunk_size=8, head_precision=head_precision, **CONFIGS["fpa"])
    naive = run(token_statistics_naive, inputs, head_precision=head_precision, **CONFIGS["fpa"])
    tol = {"atol": 2e-2, "rtol": 1.6e-2} if head_precision == "bf16" else {"atol": 1e-5, "rtol": 1e-5}
    assert_same(chunked, naive, **tol)
    step_zero = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"],
                                 ref_hidden=inputs["hidden"].detach().to(torch.bfloat16),
                                 ref_weight=inputs["weight"].detach(), lam=20.0, chunk_size=8,
                                 head_precision=head_precision)
    assert torch.equal(step_zero.hat_logp, step_zero.logp.detach())
    rounded = inputs["hidden"].detach().to(torch.bfloat16).float()
    off_rl = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"], chunk_size=8,
                              head_precision=head_precision)
    off_rl_rounded = token_statistics(rounded, inputs["weight"], inputs["targets"], chunk_size=8,
                                      head_precision=head_precision)
    assert torch.equal(step_zero.logp, off_rl_rounded.logp)
    assert torch.equal(off_rl.logp, off_rl_rounded.logp) == (head_precision == "bf16")


@pytest.mark.parametrize("config", ["logp", "fpa"])
def test_fused_chunks_match_the_eager_passes_and_naive_float64(config):
    """``fused``: the chunk's passes compiled into one expression; Off-RL's and FPA's calls (the cached
    logsumexp given) equal the eager in-place passes and the naive head, a shorter last chunk included."""
    inputs = make_inputs()
    extra = {"ref_logsumexp": (inputs["ref_hidden"] @ inputs["ref_weight"].T).logsumexp(-1)} if config == "fpa" else {}
    fused = run(token_statistics, inputs, chunk_size=10, fused=True, **extra, **CONFIGS[config])
    assert_same(fused, run(token_statistics, inputs, chunk_size=10, **extra, **CONFIGS[config]), atol=1e-12, rtol=1e-12)
    assert_same(fused, run(token_statistics_naive, inputs, **extra, **CONFIGS[config]), atol=1e-10, rtol=1e-10)


class _NewProducts(TorchDispatchMode):
    """Shapes of the tensors the matrix products create (outputs on storage none of their inputs had)."""

    PRODUCTS = {"mm", "addmm", "matmul"}

    def __init__(self):
        super().__init__()
        self.shapes = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        inputs = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        out = func(*args, **(kwargs or {}))
        if func.overloadpacket.__name__ in self.PRODUCTS:
            self.shapes += [tuple(t.shape) for t in tree_flatten(out)[0]
                            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in inputs]
        return out


@pytest.mark.parametrize("head_precision", ["fp32", "bf16"])
def test_backward_adds_each_chunks_weight_gradient_in_place(head_precision):
    """No product of the backward allocates a [V, d] tensor: each chunk's ∂L/∂W (bf16 products included)
    is added where the fp32 accumulator lies, not made apart and then added (1.5 GB a chunk at Qwen3's V);
    the gradient is the one-chunk head's."""
    inputs = make_inputs(dtype=torch.float32, n=40)
    stats = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"], ref_hidden=inputs["ref_hidden"],
                             ref_weight=inputs["ref_weight"], lam=1.5, chunk_size=4, head_precision=head_precision)
    counter = _NewProducts()
    with counter:
        grads = torch.autograd.grad((inputs["g"][0].float() * stats.logp).sum(), (inputs["hidden"], inputs["weight"]))
    assert (V, D) not in counter.shapes and (4, D) in counter.shapes, counter.shapes  # grad_hidden's, per chunk
    whole = run(token_statistics, inputs, chunk_size=40, head_precision=head_precision, **CONFIGS["fpa"])[1]
    torch.testing.assert_close(grads[1], whole[1], atol=1e-5, rtol=1e-5)


def test_add_product_is_product_added_in_place():
    gen = torch.Generator().manual_seed(3)
    a, b = (torch.randn(*shape, generator=gen).to(torch.bfloat16) for shape in ((V, 29), (29, D)))
    out = torch.randn(V, D, generator=gen)
    expected = out + product(a, b, torch.float32)
    storage = out.untyped_storage().data_ptr()
    add_product(out, a, b)
    assert out.untyped_storage().data_ptr() == storage and torch.equal(out, expected)


class _NewChunkBuffers(TorchDispatchMode):
    """How many [rows, V] tensors the ops create (outputs on storage none of their inputs had)."""

    def __init__(self, rows: int):
        super().__init__()
        self.rows, self.count = rows, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        inputs = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        out = func(*args, **(kwargs or {}))
        self.count += sum(1 for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and tuple(t.shape) == (
            self.rows, V) and t.untyped_storage().data_ptr() not in inputs)
        return out


@pytest.mark.parametrize("ref, given_lse, lam, want_kl", [(False, False, None, False), (True, True, 1.5, False),
                                                          (True, False, 1.5, False), (True, True, 2.0, True),
                                                          (True, True, None, False)])
def test_the_head_holds_the_chunk_buffers_its_budget_counts(ref, given_lse, lam, want_kl):
    """``head_buffers`` is what a call allocates of [chunk, V] in forward (backward holds no more): the
    count ``head_chunk_rows`` divides the budget by."""
    inputs = make_inputs(dtype=torch.float32, n=40)
    kwargs = {"ref_hidden": inputs["ref_hidden"], "ref_weight": inputs["ref_weight"]} if ref else {}
    if given_lse:
        kwargs["ref_logsumexp"] = (inputs["ref_hidden"] @ inputs["ref_weight"].T).logsumexp(-1)
    forward, backward = _NewChunkBuffers(8), _NewChunkBuffers(8)
    with forward:
        stats = token_statistics(inputs["hidden"], inputs["weight"], inputs["targets"], lam=lam, want_kl=want_kl,
                                 chunk_size=8, **kwargs)
    with backward:
        (stats.logp.sum() + (stats.fwd_kl.sum() if want_kl else 0)).backward()
    assert forward.count == head_buffers(ref, given_lse, want_kl) >= backward.count


@pytest.mark.parametrize("name, mode, buffers", [("offrl", "cached", 1), ("fpa", "cached", 2), ("fpa", "online", 3),
                                                 ("dpo", "cached", 1), ("dpo", "online", 3),
                                                 ("offrl_kl", "cached", 3)])
def test_each_objectives_head_buffers_follow_what_its_reference_gives(name, mode, buffers):
    """Off-RL reads no reference per token; FPA the cache's hidden states with their logsumexp (no scratch);
    DPO the cache's sequence log-probabilities, or an online reference's hidden states without theirs."""
    assert objective_head_buffers(get_objective(name), mode) == buffers
