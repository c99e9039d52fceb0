"""benchmarks/training/padding.py packs the trainer's micro-batches without changing what the model computes:
first-fit decreasing places every sequence once within the row width, and the packed layout's
hidden states at the completion-predicting positions are the padded layout's (float64)."""

import sys
from pathlib import Path

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from training import padding  # noqa: E402

from fpa.data.tokenize import EncodedSample  # noqa: E402
from fpa.training.batches import Group, collate  # noqa: E402


def test_first_fit_decreasing_places_every_sequence_once_within_the_width():
    lengths = [9, 4, 6, 3, 5, 9, 2]
    rows = padding.pack_rows(lengths, 10)
    assert sorted(i for row in rows for i in row) == list(range(len(lengths)))
    assert all(sum(lengths[i] for i in row) <= 10 for row in rows)
    assert rows == [[0], [5], [2, 1], [4, 3, 6]]


@pytest.mark.parametrize("width", [0, 20])
def test_packed_hidden_states_are_the_padded_ones(width):
    generator = torch.Generator().manual_seed(0)
    lengths, prompt = [12, 5, 7, 4, 9, 3], 2
    encoded = [EncodedSample(input_ids=torch.randint(2, 50, (n,), generator=generator).tolist(), prompt_len=prompt)
               for n in lengths]
    samples = [{"reward": 1.0} for _ in lengths]
    batch = collate([Group(0, tuple(range(len(lengths))))], encoded, samples, pad_id=0)
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=50, hidden_size=64, num_hidden_layers=2, num_attention_heads=1,
                         num_key_value_heads=1, head_dim=64, intermediate_size=128)
    body = Qwen2ForCausalLM(config).double().eval().get_decoder()
    ids, position_ids, rows, positions = padding.packed_layout(batch, width)
    assert ids.shape[0] < len(lengths) and ids.shape[1] == max(width, *lengths)
    with torch.no_grad():
        padded = body(input_ids=batch.input_ids, attention_mask=batch.attention_mask).last_hidden_state
        packed = body(input_ids=ids, position_ids=position_ids, use_cache=False).last_hidden_state
    torch.testing.assert_close(packed[rows, positions], padded[batch.rows, batch.positions], rtol=0, atol=1e-10)
