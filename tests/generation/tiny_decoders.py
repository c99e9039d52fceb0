"""Tiny seeded decoders for the slot decoder's tests: a Qwen3 with grouped K/V (4 query heads on 2
key/value heads), randomly initialised from a seed on the CPU, and the prompts and row seeds the
recorded tokens (``fixtures/decode/cpu_tokens.json``) were drawn for."""

from __future__ import annotations

import torch

VOCABULARY = 97
STOP_ID = 4  # a row stops at it: rows end apart


def tiny_qwen3(seed: int = 0):
    from transformers import Qwen3Config, Qwen3ForCausalLM

    # initializer_range 0.5 (not 0.02): peaked next-token distributions, so temperatures and seeds
    # change the tokens and rows stop at STOP_ID at different steps
    config = Qwen3Config(vocab_size=VOCABULARY, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=128,
                         initializer_range=0.5, tie_word_embeddings=False)
    torch.manual_seed(seed)
    return Qwen3ForCausalLM(config).eval()


def prompts_and_seeds(rows: int = 23) -> tuple[list[list[int]], list[int]]:
    """``rows`` prompts of 1 to 9 tokens (never the stop id) and one row seed each."""
    g = torch.Generator().manual_seed(7)
    lengths = torch.randint(1, 10, (rows,), generator=g).tolist()
    prompts = [torch.randint(STOP_ID + 1, VOCABULARY, (n,), generator=g).tolist() for n in lengths]
    return prompts, [1000 + 17 * r for r in range(rows)]
