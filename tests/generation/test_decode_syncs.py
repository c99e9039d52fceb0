"""The slot decoder's host syncs, counted on the CPU by a dispatch counter (``StepCounter``, with the
counter sampler a GPU runs): its one wait is the read of the token ids, once every ``sync_every`` steps (or
earlier, when a row reaches ``max_new_tokens``), and slots are refilled while other rows still decode.
The same count on a mixed-length workload, before and after the slot decoder's refill and read interval,
is in docs/archive/benchmarks.md ("A decode step, counted")."""

import math
from collections import Counter

import pytest
from tiny_decoders import STOP_ID, prompts_and_seeds, tiny_qwen3
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from fpa.generation.decode import SlotDecoder

#: what waits for the device: dispatched ops whose result size or value the host must see
SYNC_OPS = {"_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_dim"}
SYNC_METHODS = {"tolist", "numpy", "cpu"}  # copies to the host that dispatch no op


class StepCounter(TorchDispatchMode):
    """Host syncs per forward of ``body`` and what follows it until the next forward (a segment: a prefill
    where the input is wider than one token, else a decode step), with the rows it computes. On the CPU
    every tensor is the device's, so a loop that holds its host facts in CPU tensors is counted as a GPU's
    would wait: the dispatched ``_local_scalar_dense`` (``.item()``, ``int()``, ``bool()`` of a tensor),
    ``nonzero``, ... and the Python-level ``Tensor.tolist``, ``.numpy``, ``.cpu`` (``TorchFunctionMode``:
    they copy without dispatching an op)."""

    def __init__(self, body):
        super().__init__()
        self.segments: list[dict] = [{"kind": "setup", "syncs": Counter(), "rows": 0}]
        self._hook = body.register_forward_pre_hook(self._enter, with_kwargs=True)
        self._functions = _SyncMethods(self)

    def _enter(self, module, args, kwargs):
        ids = kwargs["input_ids"]
        self.segments.append({"kind": "prefill" if ids.shape[1] > 1 else "decode", "syncs": Counter(),
                              "rows": ids.shape[0]})

    def sync(self, name: str) -> None:
        self.segments[-1]["syncs"][name] += 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ in SYNC_OPS:
            self.sync(f"aten.{func.overloadpacket.__name__}")
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        self._functions.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self._functions.__exit__(*exc)
        self._hook.remove()


class _SyncMethods(TorchFunctionMode):
    def __init__(self, counter: StepCounter):
        super().__init__()
        self.counter = counter

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", None) in SYNC_METHODS:
            self.counter.sync(f"Tensor.{func.__name__}")
        return func(*args, **(kwargs or {}))


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
    syncs = sum((segment["syncs"] for segment in counter.segments), start=Counter())
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
