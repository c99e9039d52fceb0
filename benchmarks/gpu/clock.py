"""Clocks and memory probes that work alike on CUDA and CPU (the tiny mode), and paired rounds of steps."""

from __future__ import annotations

import time

import torch

from shared.rounds import paired_ratio, rotated


def synchronize(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def timed_step(fn, device) -> dict:
    """``fn()`` once: wall seconds (device synchronised on both sides) and the peak device memory allocated
    during it (None on CPU); returns {"s", "peak_bytes", "result"}."""
    cuda = torch.device(device).type == "cuda"
    synchronize(device)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    clock = time.perf_counter()
    result = fn()
    synchronize(device)
    seconds = time.perf_counter() - clock
    return {"s": seconds, "peak_bytes": torch.cuda.max_memory_allocated() if cuda else None, "result": result}


def paired_rounds(steps: dict, rounds: int, device, warm_up: dict | None = None) -> dict:
    """One warm-up call of each (of ``warm_up``'s, where a shorter call warms the same kernels), then ``rounds``
    rounds calling every step once, the order rotated each round (A B, B A, ...); returns {name: [per-round
    timed_step without result]} and the warm-up results."""
    warm = {name: timed_step(fn, device)["result"] for name, fn in (warm_up or steps).items()}
    times = {name: [] for name in steps}
    for round_ in range(rounds):
        for name in rotated(list(steps), round_):
            entry = timed_step(steps[name], device)
            entry.pop("result")
            times[name].append(entry)
    return {"rounds": times, "warm_results": warm}


def ratio_spread(rounds: dict, a: str, b: str) -> dict:
    """``paired_rounds``' seconds of step a / step b, paired by round."""
    return paired_ratio([x["s"] for x in rounds[a]], [y["s"] for y in rounds[b]])
