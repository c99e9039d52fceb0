"""benchmarks/training/flops.py counts what it says: the CPU's SDPA kernels as many FLOPs as the same
attention written as matmuls (which torch's counter knows), grouped K/V included, forward and backward;
and its scaled model keeps every FLOP term's share of Qwen3-4B-Base's step."""

import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from gpu.models import shape as paper_shape  # noqa: E402
from gpu.throughput import model_flops  # noqa: E402
from training import flops  # noqa: E402


def _attention_as_matmuls(query, key, value):
    """Causal attention in plain matmuls, K/V repeated for the grouped query heads."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, 1), value.repeat_interleave(groups, 1)
    scores = query @ key.transpose(-1, -2) / query.shape[-1] ** 0.5
    causal = torch.ones(scores.shape[-2:], dtype=torch.bool).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(-1) @ value


@pytest.mark.parametrize("kv_heads", [4, 2])
def test_the_cpu_sdpa_kernels_count_as_their_matmuls(kv_heads):
    """Forward: QKᵀ and PV; backward: their four gradient products and, as flash kernels do and torch's
    formula counts, QKᵀ once more (the scores are recomputed, not stored)."""
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(2, 4, 37, 16, generator=generator, requires_grad=True)
    key, value = (torch.randn(2, kv_heads, 37, 16, generator=generator, requires_grad=True) for _ in range(2))

    def fused():
        return F.scaled_dot_product_attention(query, key, value, is_causal=True, enable_gqa=True)

    with torch.no_grad():
        (_, forward), (_, plain_forward) = (flops.counted(f) for f in (fused, lambda: _attention_as_matmuls(
            query, key, value)))
    _, both = flops.counted(lambda: fused().sum().backward())
    _, plain = flops.counted(lambda: _attention_as_matmuls(query, key, value).sum().backward())
    assert set(both["by_op"]) == {"aten._scaled_dot_product_flash_attention_for_cpu",
                                  "aten._scaled_dot_product_flash_attention_for_cpu_backward"}
    assert forward["total"] == plain_forward["total"] == 4 * 2 * 4 * 37 * 37 * 16
    assert both["total"] == both["attention_flops"] == plain["total"] + plain_forward["total"] // 2


def test_the_scaled_model_keeps_every_flop_terms_share():
    """Per token, the body's matmuls (L x layer weights), the attention (L x query width x the 8 times
    longer sequences) and the head (V x d) shrink alike, so a step of sequences 8 times shorter has the
    full model's shares: its model FLOPs are the full step's times one factor."""
    full, scaled = paper_shape(flops.MODEL, tiny=False).architecture, flops.scaled_shape(8, 3)
    small = scaled.architecture
    body = full.num_hidden_layers * full.layer_linear_params / (small.num_hidden_layers * small.layer_linear_params)
    attention = 8 * full.num_hidden_layers * full.q_width / (small.num_hidden_layers * small.q_width)
    head = full.embedding_params / small.embedding_params
    assert (small.hidden_size, small.num_key_value_heads, small.head_dim, scaled.max_length) == (320, 1, 128, 320)
    assert attention == pytest.approx(body, rel=1e-3) and head == pytest.approx(body, rel=1e-3)
    lengths = [120, 33, 301]
    step = (model_flops(paper_shape(flops.MODEL, tiny=False), [8 * n for n in lengths], 8 * 200)
            / model_flops(scaled, lengths, 200))
    assert step == pytest.approx(8 * body, rel=1e-3)
    with pytest.raises(ValueError, match="--width 3: qwen3-4b-base's hidden_size 2560 is not a multiple of it"):
        flops.scaled_shape(3, 3)
