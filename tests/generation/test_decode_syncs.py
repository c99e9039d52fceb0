"""The slot decoder's host syncs, counted on the CPU by the benchmark's dispatch counter
(``benchmarks/generation/decode_steps.py``'s ``StepCounter``, with the counter sampler a GPU runs):
its one wait is the read of the token ids, once every ``sync_every`` steps (or earlier, when a row
reaches ``max_new_tokens``), and slots are refilled while other rows still decode."""

import math
import sys
from pathlib import Path

import pytest
import torch
from tiny_decoders import STOP_ID, prompts_and_seeds, tiny_qwen3

from fpa.generation.decode import SlotDecoder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "generation"))
from decode_steps import StepCounter  # noqa: E402

MAX_NEW = 20


def _counted(sync_every: int, slots: int = 8, temperature: float = 0.9, max_new: int = MAX_NEW):
    model = tiny_qwen3()
    prompts, seeds = prompts_and_seeds()
    counter = StepCounter(model.base_model)
    with counter:
        outputs = SlotDecoder(model, slots=slots, stop_ids={STOP_ID}, pad_id=0, noise="counter",
                              sync_every=sync_every).run(prompts, seeds, temperature=temperature,
                                                         max_new_tokens=max_new)
    return counter, outputs


@pytest.mark.parametrize("sync_every", [1, 4])
def test_the_only_host_sync_is_the_read_of_the_token_ids_once_per_sync_every_steps(sync_every):
    counter, outputs = _counted(sync_every)
    steps = [segment for segment in counter.segments if segment["kind"] != "setup"]
    syncs = sum((segment["syncs"] for segment in counter.segments), start=type(steps[0]["syncs"])())
    assert set(syncs) == {"Tensor.tolist"}  # no .item(), int(tensor), nonzero, .cpu() anywhere in the loop
    at_cap = sum(len(row) == MAX_NEW for row in outputs)
    assert 0 < at_cap < len(outputs) and len({len(row) for row in outputs}) > 2  # rows stop apart, some at the cap
    # a read takes sync_every steps, or fewer when a row reaches max_new_tokens (that row stops there)
    assert math.ceil(len(steps) / sync_every) <= syncs["Tensor.tolist"] <= len(steps) / sync_every + at_cap
    if sync_every == 1:
        assert syncs["Tensor.tolist"] == len(steps)


def test_slots_are_refilled_while_other_rows_still_decode():
    """A refill does not wait for a whole batch's worth of free slots: some decode step holds more rows
    than the prefill before it admitted (rows admitted earlier, still decoding, beside them)."""
    counter, outputs = _counted(sync_every=1, slots=4, temperature=1.3, max_new=2 * MAX_NEW)
    assert len({len(row) for row in outputs}) > 6  # rows stop apart
    forwards = [segment for segment in counter.segments if segment["kind"] != "setup"]
    admitted, mixed = None, 0
    for segment in forwards:
        if segment["kind"] == "prefill":
            admitted = segment["rows"]
        elif admitted is not None:
            mixed += segment["rows"] > admitted
            admitted = None
    assert mixed >= 1
    assert sum(segment["kind"] == "prefill" for segment in forwards) > math.ceil(len(outputs) / 4)  # more refills than waves
