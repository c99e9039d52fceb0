"""Run measurements in priority order inside a time budget, and keep what each one measured.

Each measurement has an estimate of its seconds (full shapes on an H200, or the tiny CPU run);
the plan with its estimates is printed before anything starts. A measurement the memory planner
rules out on this GPU (``unfit``), or whose estimate exceeds what is left of the budget, is skipped
with one line; one that raises (out of memory, a missing package) is recorded with its error and
the next one runs. The record is written
atomically after every measurement, so a run killed at its time limit keeps what it finished.
"""

from __future__ import annotations

import gc
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

from fpa.io import write_json


@dataclass(frozen=True)
class Measurement:
    key: str
    title: str
    estimate_s: float  # full shapes on one H200
    tiny_estimate_s: float  # --tiny on two CPU cores
    run: Callable[[dict], dict]  # context -> result
    unfit: str | None = None  # why the memory planner says it cannot fit this GPU (gpu.training.unfit_reason)


def plan_lines(measurements: list[Measurement], tiny: bool, budget_s: float) -> list[str]:
    estimate = (lambda m: m.tiny_estimate_s) if tiny else (lambda m: m.estimate_s)
    total = sum(estimate(m) for m in measurements if not m.unfit)
    lines = [f"plan ({'tiny, CPU' if tiny else 'full shapes'}; budget {budget_s:.0f} s, "
             f"estimated {total:.0f} s in all):"]
    elapsed = 0.0
    for rank, m in enumerate(measurements, 1):
        if m.unfit:
            lines.append(f"  {rank}. {m.key:<14} skip: {m.unfit}")
            continue
        elapsed += estimate(m)
        lines.append(f"  {rank}. {m.key:<14} ~{estimate(m):4.0f} s (by {elapsed:4.0f} s)  {m.title}")
    return lines


def free_device_memory() -> None:
    """Free the GPU and forget accelerate's process-wide state, between measurements and between the
    sides of one: our trainer builds its Accelerator with ``mixed_precision="no"`` and TRL's trainer
    with bf16 on a GPU, and accelerate refuses a second precision in one process (the first H200 run
    lost three measurements to it)."""
    from accelerate.state import AcceleratorState, GradientState

    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def run_all(measurements: list[Measurement], context: dict, record: dict, out: Path, budget_s: float,
            tiny: bool) -> dict:
    """Each measurement in order, its result (or skip, or error) into ``record["measurements"]``."""
    started = time.perf_counter()
    record.setdefault("measurements", {})
    for m in measurements:
        estimate = m.tiny_estimate_s if tiny else m.estimate_s
        left = budget_s - (time.perf_counter() - started)
        entry = {"title": m.title, "estimate_s": estimate}
        if m.unfit or estimate > left:
            entry.update(status="skipped",
                         reason=m.unfit or f"estimated {estimate:.0f} s > {left:.0f} s left of the budget")
            print(f"skip {m.key}: {entry['reason']}", flush=True)
        else:
            print(f"run  {m.key} (~{estimate:.0f} s, {left:.0f} s left): {m.title}", flush=True)
            clock = time.perf_counter()
            try:
                entry.update(status="ok", result=m.run(context))
            except Exception as error:  # noqa: BLE001 -- one failure must not lose the other measurements
                entry.update(status="failed", error=f"{type(error).__name__}: {error}"[:2000],
                             traceback=traceback.format_exc()[-4000:])
                print(f"FAIL {m.key}: {entry['error'][:300]}", flush=True)
            entry["seconds"] = time.perf_counter() - clock
            print(f"done {m.key}: {entry['status']} in {entry['seconds']:.1f} s", flush=True)
            free_device_memory()
        record["measurements"][m.key] = entry
        record.setdefault("order", []).append(m.key)  # the file's keys are sorted; this is the run's order
        record["elapsed_s"] = time.perf_counter() - started
        write_json(out, record)
    return record


def merge_calls(first: dict, *later: dict) -> dict:
    """One record of several device calls: a later call's finished measurement replaces the earlier
    call's entry (a failure, a skip) and keeps its own commit and start, so each number still names
    the code that measured it."""
    merged = {**first, "measurements": dict(first["measurements"]), "order": list(first.get("order", []))}
    for call in later:
        for key, entry in call["measurements"].items():
            if entry["status"] != "ok":
                continue
            merged["measurements"][key] = {**entry, "commit": call["commit"], "started": call["started"]}
            if key not in merged["order"]:
                merged["order"].append(key)
    return merged
