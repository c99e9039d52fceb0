"""Our DPO / KTO / SFT optimizer step against TRL's trainers on the same model, batch and length,
each side as its users run it: ours with config/paper.yaml's training settings (bf16 autocast over
fp32 weights, gradient checkpointing, the head's chunk from head_memory_mb), TRL with its own
defaults on a GPU (bf16, gradient checkpointing, fused AdamW). The two sides and their checks are
``benchmarks/training/trl_step.py``'s (``Ours``, ``Trl``, ``prepare``, ``check_same_work``); here each side runs
alone on the device (its peak memory is its own), a warm-up step then the timed steps, and the
time ratio is taken step by step (step i of ours over step i of TRL).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from training import trl_step
from gpu.budget import free_device_memory
from gpu.clock import timed_step
from gpu.models import Shape, build_model
from shared.rounds import paired_ratio


def _args(shape: Shape, device) -> argparse.Namespace:
    cuda = torch.device(device).type == "cuda"
    training = {k: shape.training[k] for k in ("precision", "gradient_checkpointing", "head_memory_mb")}
    return argparse.Namespace(seq=shape.max_length, prompt=shape.prompt, options=[], trl_defaults=cuda,
                              training=training if cuda else {})


def _alone(make, rounds: int, device) -> tuple[dict, float, torch.Tensor]:
    """One side alone on the device: built, a warm-up step, ``rounds`` timed steps; its peak is the step's
    peak less what was allocated before the side was built (nothing, unless the other side left some)."""
    baseline = torch.cuda.memory_allocated() if torch.cuda.is_available() else 0
    side = make()
    first_loss = side.step()
    entries = [timed_step(side.step, device) for _ in range(rounds)]
    peaks = [e["peak_bytes"] for e in entries if e["peak_bytes"] is not None]
    ids = side.input_ids().cpu()
    del side
    free_device_memory()
    return ({"step_s": [e["s"] for e in entries], "peak_bytes": max(peaks) - baseline if peaks else None,
             "baseline_bytes": baseline}, first_loss, ids)


def compare(shape: Shape, work: Path, device, cases: list[str], rounds: int) -> dict:
    args = _args(shape, device)
    work.mkdir(parents=True, exist_ok=True)
    trl_step.prepare(args, work, build=lambda _, seed: build_model(shape, device, torch.bfloat16, seed),
                     device=str(device))
    result = {"shape": shape.name, "tokens_per_sequence": shape.max_length, "rounds": rounds,
              "ours_training": args.training, "trl_defaults": args.trl_defaults, "cases": {}}
    for case in cases:
        entry = {"first_loss": {}, "input_ids": {}, "sides": {}}
        for name, make in (("ours", lambda: trl_step.Ours(args, work, case, "auto")),
                           ("trl", lambda: trl_step.Trl(args, work, case))):
            entry["sides"][name], entry["first_loss"][name], entry["input_ids"][name] = _alone(make, rounds, device)
        try:
            trl_step.check_same_work(case, entry["first_loss"], entry.pop("input_ids"))
            entry["check"] = "same token ids and first-step loss"
        except AssertionError as error:  # bf16 on both sides: the losses may differ past the fp32 tolerance
            entry["check"] = str(error)
        ours, theirs = entry["sides"]["ours"], entry["sides"]["trl"]
        entry["time_ratio_ours_over_trl"] = paired_ratio(ours["step_s"], theirs["step_s"])
        if theirs["peak_bytes"]:
            entry["peak_ratio_ours_over_trl"] = ours["peak_bytes"] / theirs["peak_bytes"]
        result["cases"][case] = entry
    return result
