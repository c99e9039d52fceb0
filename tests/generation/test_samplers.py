"""The slot decoder's samplers: the CPU path draws today's tokens bit for bit (recorded before the
device sampler existed), the counter sampler draws the same tokens per row whatever the slot
layout, its noise is splitmix64's and its draws follow softmax(logits / T)."""

import json
import math
from pathlib import Path

import pytest
import torch
from tiny_decoders import STOP_ID, prompts_and_seeds, tiny_qwen3

from fpa.generation import noise, slot_cache
from fpa.generation.decode import SlotDecoder
from fpa.generation.hf import HFBackend
from fpa.generation.samplers import CounterSampler

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "decode" / "cpu_tokens.json"
MAX_NEW = 20


def _decode(model, prompts, seeds, temperature, **layout):
    decoder = SlotDecoder(model, stop_ids={STOP_ID}, pad_id=0, **layout)
    return decoder.run(prompts, seeds if temperature else [None] * len(prompts), temperature=temperature,
                       max_new_tokens=MAX_NEW)


@pytest.mark.parametrize("noise_name, sync_every, span_cost", [
    ("auto", None, slot_cache.SPAN_COST["cpu"]), ("generator", 1, 0), ("generator", 3, 10 ** 9), ("generator", 8, 0)])
@pytest.mark.parametrize("temperature", ["0.7", "1.3", "0.0"])
def test_cpu_path_tokens_are_bit_for_bit_those_recorded_before_the_device_sampler(monkeypatch, temperature,
                                                                                   noise_name, sync_every, span_cost):
    """What SlotDecoder drew on the CPU at the commit in the fixture (before the counter sampler, the
    grouped attention, the host-side lengths, reads every few steps, refills as rows stop and attention
    span by span), token for token, whether the host reads the tokens every step (the CPU's default) or
    every 3 or 8 (rows then decode past their stops, and refills come later), and with every refill's
    rows attending apart (span cost 0), all rows together (an endless span cost) or as the CPU splits
    them; rows stop apart."""
    monkeypatch.setitem(slot_cache.SPAN_COST, "cpu", span_cost)
    torch.set_num_threads(1)
    prompts, seeds = prompts_and_seeds()
    recorded = json.loads(RECORDED.read_text())["tokens_by_temperature"][temperature]
    tokens = _decode(tiny_qwen3(), prompts, seeds, float(temperature), slots=8, noise=noise_name,
                     sync_every=sync_every)
    assert tokens == recorded
    assert len({len(row) for row in tokens}) > 2


@pytest.fixture(scope="module")
def counter_reference():
    """Counter-noise tokens of every row decoded in one batch, the model in float64 (so that batched
    kernels' last bits cannot move a draw across a boundary)."""
    model = tiny_qwen3().double()
    prompts, seeds = prompts_and_seeds()
    return model, prompts, seeds, _decode(model, prompts, seeds, 0.9, slots=len(prompts), noise="counter")


@pytest.mark.parametrize("layout", ["one slot", "slot reuse, read every 2", "reversed order", "every third row",
                                    "rows twice, other slots, read every 5"])
def test_counter_sampling_is_reproducible_per_row_across_slot_layouts(counter_reference, layout):
    """A row's counter-noise tokens depend on its prompt and seed only: not on the batch size, how often
    the host reads, the rows beside it, the order of admission or the slot it moves into when others stop."""
    model, prompts, seeds, reference = counter_reference
    rows = list(range(len(prompts)))
    slots, sync_every = {"one slot": (1, 1), "slot reuse, read every 2": (5, 2), "reversed order": (7, 1),
                         "every third row": (3, 1), "rows twice, other slots, read every 5": (9, 5)}[layout]
    if layout == "reversed order":
        rows = rows[::-1]
    elif layout == "every third row":
        rows = rows[::3]
    elif layout == "rows twice, other slots, read every 5":
        rows = rows + rows[::2]
    tokens = _decode(model, [prompts[r] for r in rows], [seeds[r] for r in rows], 0.9, slots=slots,
                     sync_every=sync_every, noise="counter")
    assert tokens == [reference[r] for r in rows]


def test_counter_tokens_differ_by_seed_and_from_the_generators(counter_reference):
    model, prompts, seeds, reference = counter_reference
    other_seeds = _decode(model, prompts, [s + 1 for s in seeds], 0.9, slots=8, noise="counter")
    generator = _decode(model, prompts, seeds, 0.9, slots=8, noise="generator")
    assert sum(a != b for a, b in zip(other_seeds, reference)) > len(prompts) // 2
    assert sum(a != b for a, b in zip(generator, reference)) > len(prompts) // 2
    greedy = {name: _decode(model, prompts, seeds, 0.0, slots=8, noise=name)
              for name in ("counter", "generator")}
    assert greedy["counter"] == greedy["generator"]


def _splitmix64_element(seed: int, index: int) -> int:
    """Element ``index`` of the splitmix64 stream seeded with ``seed`` (Steele et al. 2014), in Python ints."""
    mask = (1 << 64) - 1
    z = (seed + index * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def test_counter_noise_is_the_splitmix64_formula():
    seeds, steps, vocabulary = [0, 1, 2 ** 62 + 12345, 2 ** 63 - 1], [0, 3, 17, 999], 11
    keys = noise.step_keys(torch.tensor(seeds), torch.tensor(steps))
    draws = noise.exponential(keys, noise.vocabulary_offsets(vocabulary, torch.device("cpu"))).double()
    for row, (seed, step) in enumerate(zip(seeds, steps)):
        key = _splitmix64_element(seed, step + 1)
        assert keys[row].item() % (1 << 64) == key
        for v in range(vocabulary):
            uniform = ((_splitmix64_element(key, v + 1) >> 32) + 0.5) / 2 ** 32
            expected = -math.log1p(-uniform)
            assert draws[row, v].item() == pytest.approx(expected, rel=2e-7, abs=1e-12)


def test_counter_draws_follow_softmax_of_logits_over_temperature():
    """20,000 rows of the same logits, one seed each: every token's frequency within 4.5 standard errors
    of softmax(logits / T) (a fixed computation: the seeds are fixed, so it cannot flake)."""
    rows, temperature = 20_000, 0.8
    logits = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0, -3.0, 1.5], dtype=torch.float64)
    sampler = CounterSampler(rows, len(logits), temperature, torch.device("cpu"))
    sampler.admit(0, list(range(10_000, 10_000 + rows)))
    tokens = sampler.draw(logits.expand(rows, -1), 0, rows)
    expected = torch.softmax(logits / temperature, dim=-1)
    frequency = torch.bincount(tokens, minlength=len(logits)).double() / rows
    standard_error = (expected * (1 - expected) / rows).sqrt()
    assert ((frequency - expected).abs() < 4.5 * standard_error).all(), (frequency, expected)
    assert sampler.steps.tolist() == [1] * rows  # the next draw uses the next token index


def test_a_bad_noise_name_fails_before_the_model_loads(tmp_path):
    with pytest.raises(ValueError, match=r"noise: expected one of \['auto', 'generator', 'counter'\], got 'philox'"):
        HFBackend(tmp_path / "no-model-here", noise="philox")


def _unmix64(z: int) -> int:
    """The word whose splitmix64 finaliser is ``z`` (each xor-shift and odd multiplication undone)."""
    mask = (1 << 64) - 1

    def unshift(y: int, bits: int) -> int:
        x = y
        for _ in range(64 // bits + 1):
            x = y ^ (x >> bits)
        return x

    z = unshift(z, 31)
    z = unshift(z * pow(0x94D049BB133111EB, -1, 1 << 64) & mask, 27)
    return unshift(z * pow(0xBF58476D1CE4E5B9, -1, 1 << 64) & mask, 30)


def _signed(word: int) -> int:
    return word - (1 << 64) if word >= 1 << 63 else word


# the top 32 of the 64 bits make u; the top 128 of those round to 1 in float32
EXTREME_TOPS = [2 ** 32 - 1, 2 ** 32 - 128, 2 ** 32 - 129, 2 ** 32 - 256, 0, 1]


@pytest.mark.parametrize("top", EXTREME_TOPS)
def test_counter_noise_is_finite_and_positive_at_the_extreme_counters(top):
    """u stays strictly inside (0, 1) for every counter, so every Exp(1) draw is finite and positive:
    the top 128 counters used to round u to 1 (an infinite draw, that token id excluded)."""
    bits = top << 32 | 0x1234
    offsets = noise.vocabulary_offsets(3, torch.device("cpu"))
    key = _signed((_unmix64(bits) - offsets[1].item()) % (1 << 64))  # vocabulary id 1 gets these bits
    draw = noise.exponential(torch.tensor([key]), offsets)[0, 1].item()
    uniform = (top + 0.5) / 2 ** 32
    assert 0 < draw < math.inf
    assert draw == pytest.approx(min(-math.log1p(-uniform), 24 * math.log(2)), rel=1e-6)


def test_a_token_at_an_extreme_counter_can_be_drawn():
    """A dominant token whose counter is the largest (u rounded to 1 before the cap) is drawn."""
    offsets = noise.vocabulary_offsets(2, torch.device("cpu"))
    key = (_unmix64((2 ** 32 - 1) << 32) - offsets[0].item()) % (1 << 64)  # vocabulary id 0's bits: all ones
    seed = _signed((_unmix64(key) - 0x9E3779B97F4A7C15) % (1 << 64))  # its step 0 key (step_keys)
    sampler = CounterSampler(1, 2, 1.0, torch.device("cpu"))
    sampler.admit(0, [seed])
    assert noise.step_keys(torch.tensor([seed]), torch.tensor([0])).item() == _signed(key)
    assert sampler.draw(torch.tensor([[30.0, 0.0]]), 0, 1).tolist() == [0]
