"""The slot cache's size per slot, which plans a GPU run's slot count, is what SlotCache allocates."""

import torch
from tiny_decoders import tiny_qwen3

from fpa.generation.slot_cache import SlotCache, cache_bytes_per_slot, slots_that_fit


def test_bytes_per_slot_are_what_the_cache_allocates():
    config = tiny_qwen3().config
    for dtype in (torch.float32, torch.bfloat16):
        cache = SlotCache(config, 5, 37, dtype, torch.device("cpu"))
        allocated = sum(t.numel() * t.element_size() for t in (cache.keys, cache.values))
        assert allocated == 5 * cache_bytes_per_slot(config, 37, dtype)
    assert slots_that_fit(config, 37, torch.float32, torch.device("cpu")) is None  # the host is not probed
