"""The slot decoder's attention equals plain attention over repeated K/V heads (float64), on a decode
step with per-row masks and on a causal prefill, and the decoder switches a model to it only while
decoding."""

import torch
from tiny_decoders import tiny_qwen3
from transformers import AttentionInterface

from fpa.generation.slot_attention import NAME, grouped_slot_attention, slot_attention


class _Attention:  # what transformers' attention layers carry that the SDPA path reads
    num_key_value_groups = 3
    is_causal = True


def _plain(query, key, value, mask, scale):
    """softmax(q k^T * scale + mask) v with each K/V head repeated for its query heads; [rows, q, heads, dim]."""
    groups = query.shape[1] // key.shape[1]
    key, value = key.repeat_interleave(groups, dim=1), value.repeat_interleave(groups, dim=1)
    scores = query @ key.transpose(-1, -2) * scale
    scores = scores.masked_fill(~mask, float("-inf"))
    return (scores.softmax(-1) @ value).transpose(1, 2)


def test_decode_step_with_row_masks_matches_repeated_kv_attention():
    g = torch.Generator().manual_seed(0)
    rows, kv_heads, filled, dim = 5, 2, 13, 8
    query = torch.randn(rows, kv_heads * 3, 1, dim, generator=g, dtype=torch.float64)
    key, value = (torch.randn(rows, kv_heads, filled, dim, generator=g, dtype=torch.float64) for _ in range(2))
    positions = torch.tensor([12, 0, 7, 3, 12])  # each row sees keys 0..its position
    mask = (torch.arange(filled) <= positions[:, None])[:, None, None, :]
    out, _ = slot_attention(_Attention(), query, key, value, mask, scaling=0.3)
    assert out.shape == (rows, 1, kv_heads * 3, dim)
    torch.testing.assert_close(out, _plain(query, key, value, mask, 0.3), rtol=1e-12, atol=1e-12)


def test_spans_attend_over_their_own_keys_as_the_whole_batch_would():
    """Rows in spans, each over its own longest row's keys, get what one call over every key gives."""
    g = torch.Generator().manual_seed(2)
    rows, kv_heads, filled, dim = 6, 2, 17, 8
    query = torch.randn(rows, kv_heads * 3, 1, dim, generator=g, dtype=torch.float64)
    key, value = (torch.randn(rows, kv_heads, filled, dim, generator=g, dtype=torch.float64) for _ in range(2))
    positions = torch.tensor([16, 12, 14, 3, 5, 0])
    mask = (torch.arange(filled) <= positions[:, None])[:, None, None, :]
    spans = [(0, 3, 17), (3, 5, 6), (5, 6, 1)]
    apart, _ = slot_attention(_Attention(), query, key, value, mask, scaling=0.3, slot_spans=spans)
    whole, _ = slot_attention(_Attention(), query, key, value, mask, scaling=0.3)
    torch.testing.assert_close(apart, whole, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(apart, _plain(query, key, value, mask, 0.3), rtol=1e-12, atol=1e-12)


def test_prefill_is_causal_attention_among_its_own_positions():
    g = torch.Generator().manual_seed(1)
    rows, kv_heads, width, dim = 3, 2, 9, 8
    query = torch.randn(rows, kv_heads * 3, width, dim, generator=g, dtype=torch.float64)
    key, value = (torch.randn(rows, kv_heads, width, dim, generator=g, dtype=torch.float64) for _ in range(2))
    causal = torch.ones(width, width, dtype=torch.bool).tril()[None, None]
    out, _ = slot_attention(_Attention(), query, key, value, causal, scaling=0.25)
    torch.testing.assert_close(out, _plain(query, key, value, causal, 0.25), rtol=1e-12, atol=1e-12)


def test_the_decoder_switches_an_sdpa_model_to_it_while_decoding_only():
    model = tiny_qwen3()
    assert model.config._attn_implementation == "sdpa"
    with grouped_slot_attention(model):
        assert model.config._attn_implementation == NAME
        assert AttentionInterface().get_interface(NAME, None) is slot_attention
    assert model.config._attn_implementation == "sdpa"
    model.config._attn_implementation = "eager"  # eager reads the decoder's masks as they are: kept
    with grouped_slot_attention(model):
        assert model.config._attn_implementation == "eager"
