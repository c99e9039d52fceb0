"""The slot decoder gives the completions ``model.generate`` gave (``generate_reference``: length-sorted
left-padded batches, the seeded sampler it replaced) for the same seeds, whatever its slot count, and
its sampler draws exactly what ``torch.multinomial`` draws."""

import pytest
import torch

from fpa.generation import samplers
from fpa.generation.samplers import GeneratorSampler
from fpa.generation.hf import HFBackend
from fpa.generation.stops import completion_fields

from generate_reference import GenerateReference, toy_prompts

PROMPTS = toy_prompts(300, 8)
ARGS = dict(n=1, temperature=0.7, max_new_tokens=24, seed=3)


@pytest.fixture(scope="module")
def reference(micro_model_dir):
    backend = HFBackend(micro_model_dir, threads=1)
    return GenerateReference(backend, batch_size=64).generate(PROMPTS, **ARGS)


@pytest.mark.parametrize("slots", [64, 37, 300])
def test_same_completions_as_generate_for_every_slot_count(micro_model_dir, reference, slots):
    backend = HFBackend(micro_model_dir, batch_size=slots, threads=1)
    completions = completion_fields(backend.generate(PROMPTS, **ARGS))["completions"]
    assert sum(a != b for a, b in zip(completions, reference)) == 0
    lengths = {len(c[0]) for c in completions}
    assert min(lengths) < ARGS["max_new_tokens"] - 4 and max(lengths) == ARGS["max_new_tokens"]  # rows stop apart


def test_greedy_matches_generate(micro_model_dir):
    backend = HFBackend(micro_model_dir, batch_size=16, threads=1)
    greedy = dict(ARGS, temperature=0.0)
    reference = GenerateReference(backend, 16).generate(PROMPTS[:40], **{**greedy, "n": 1})
    assert completion_fields(backend.generate(PROMPTS[:40], **greedy))["completions"] == reference


@pytest.mark.parametrize("block_floats", [1, 4 * 7 * 23, 1 << 24])
def test_sampler_draws_what_per_step_multinomial_draws(monkeypatch, block_floats):
    """Block-drawn noise gives exactly ``torch.multinomial``'s per-row, per-step draws, whether a
    block holds one step, four, or the 32 of the step cap (boundaries mid-run), and after a row
    moved to another slot."""
    monkeypatch.setattr(samplers, "NOISE_BLOCK_FLOATS", block_floats)
    slots, vocabulary, steps, temperature = 7, 23, 40, 0.7  # 40 steps: past the 32-step block cap
    logits = torch.randn(steps, slots, vocabulary, generator=torch.Generator().manual_seed(0)) * 3
    sampler = GeneratorSampler(slots, vocabulary, temperature)
    peers = [torch.Generator().manual_seed(100 + r) for r in range(slots)]
    sampler.admit(0, [100 + slot for slot in range(slots)])
    order = list(range(slots))  # order[slot]: the row (peer) in that slot
    live = slots
    for step in range(steps):
        if step == 9:  # row 0 stops; the last live row takes its slot
            sampler.move([slots - 1], [0])
            order[0], live = order[slots - 1], slots - 1
        tokens = sampler.draw(logits[step, :live], 0, live)
        probs = torch.softmax(logits[step, :live] / temperature, dim=-1)
        expected = [torch.multinomial(probs[s], 1, generator=peers[order[s]]).item() for s in range(live)]
        assert tokens.tolist() == expected
