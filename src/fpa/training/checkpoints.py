"""Resumable checkpoints and snapshots in ``work/``, resuming from them, the final checkpoint, and the
early-stopping state.

``run`` is the training loop's session (its accelerator, parallel strategy, body, optimizer and
tokenizer). Saving HF-format weights gathers them first (FSDP): every rank calls these functions.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

from fpa.io import atomic_path, read_json, write_json
from fpa.precision import BODY_FORMATS, torch_dtype
from fpa.training.metrics import truncate_csv
from fpa.training.parallel import first_names

log = logging.getLogger("fpa.train")

SNAPSHOT_DIR = "snapshots"


def saved_dtype(precision: str) -> torch.dtype:
    """The dtype of HF-format weights on disk (snapshots, the final checkpoint): ``training.precision``'s
    format (``fpa.precision``): a bf16 run's weights in bf16, as HF's save_pretrained writes a bf16 model
    (TRL, verl's merged checkpoints), half of fp32's disk; the fp32 masters stay in the resumable checkpoint."""
    return torch_dtype(precision, BODY_FORMATS, "training.precision")


@dataclass
class State:
    step: int = 0
    best_val: float = math.inf
    evals_without_improvement: int = 0
    stopped_early: bool = False
    # wall seconds of the run so far, over every process that worked on it (setup, steps, validation)
    elapsed_s: float = 0.0


def latest_checkpoint(work: Path) -> Path | None:
    pointer = work / "latest"
    return work / pointer.read_text().strip() if pointer.exists() else None


def save_pretrained(lm, directory: Path, *, tokenizer=None, weights: dict | None = None,
                    dtype: torch.dtype | None = None) -> None:
    """``lm`` in HF format into ``directory`` (atomically); ``weights``: its full state dict when the
    model holds only shards (FSDP), else None; ``dtype``: the floating weights' dtype on disk."""
    with atomic_path(directory, directory=True) as tmp:
        write_pretrained(lm, tmp, weights=weights, dtype=dtype)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)


def write_pretrained(lm, directory: Path, *, weights: dict | None = None, dtype: torch.dtype | None = None) -> None:
    """``lm.save_pretrained`` with its floating weights cast to ``dtype`` (its ``config.json`` saying so)."""
    if dtype is None:
        lm.save_pretrained(directory, state_dict=weights, safe_serialization=True)
        return
    source = first_names(lm.state_dict() if weights is None else weights, lm)  # a tie, under its first name
    cast = {name: tensor.to(dtype) if tensor.is_floating_point() else tensor for name, tensor in source.items()}
    lm.save_pretrained(directory, state_dict=cast, safe_serialization=True)
    config = read_json(Path(directory) / "config.json")
    write_json(Path(directory) / "config.json", {**config, "dtype": str(dtype).removeprefix("torch.")})


def save_policy(run, directory: Path, *, tokenizer: bool) -> None:
    """The training loop's policy in HF format into ``directory``: every rank gathers, rank 0 writes."""
    weights = run.parallel.full_state_dict(run.body)
    if run.accelerator.is_main_process:
        save_pretrained(run.parallel.unwrap(run.body).lm, directory, tokenizer=run.tokenizer if tokenizer else None,
                        weights=weights, dtype=saved_dtype(run.cfg.precision))


def track_validation(state: State, val: float, cfg, run, work: Path) -> None:
    if val < state.best_val:
        state.best_val, state.evals_without_improvement = val, 0
        if cfg.early_stopping_patience:
            save_policy(run, work / "best", tokenizer=False)
    else:
        state.evals_without_improvement += 1
        if cfg.early_stopping_patience and state.evals_without_improvement >= cfg.early_stopping_patience:
            state.stopped_early = True


def save_resumable(run, work: Path, state: State, fingerprint: dict) -> None:
    """Every rank writes its part (RNG state; FSDP: its shards) into one temp dir; rank 0 renames it into place."""
    accelerator = run.accelerator
    name = f"step-{state.step:08d}"
    tmp = work / f".{name}.tmp"
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    accelerator.wait_for_everyone()
    run.parallel.save_state(run.body, run.optimizer, tmp)
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        write_json(tmp / "trainer_state.json", {"fingerprint": fingerprint, "state": dataclasses.asdict(state)})
        previous = latest_checkpoint(work)
        os.replace(tmp, work / name)
        with atomic_path(work / "latest") as pointer:
            pointer.write_text(name)
        if previous is not None and previous.name != name:
            shutil.rmtree(previous, ignore_errors=True)
    accelerator.wait_for_everyone()


def snapshot_name(step: int) -> str:
    return f"step-{step:08d}"


def snapshot_path(work: Path, step: int) -> Path:
    """Where the policy at ``step`` goes in HF format (like the final checkpoint): ``work/snapshots/``.

    A resumed run writes the snapshots after its checkpoint again: the same weights, replaced atomically.
    """
    return work / SNAPSHOT_DIR / snapshot_name(step)


def snapshot_steps(snapshots_dir: str | Path) -> list[int]:
    """The steps of the snapshots in a run's snapshot directory, ascending."""
    return sorted(int(p.name.split("-")[1]) for p in Path(snapshots_dir).glob("step-*") if p.is_dir())


def move_snapshots(work_dir: str | Path, out_dir: Path) -> list[int]:
    """Move a run's snapshots from ``work/`` into ``out_dir`` (a job's temp output); returns their steps."""
    for snapshot in sorted((Path(work_dir) / SNAPSHOT_DIR).glob("step-*")):
        os.replace(snapshot, out_dir / snapshot.name)
    return snapshot_steps(out_dir)


def resume_state(run, work: Path, fingerprint: dict) -> State:
    """The state of the latest checkpoint in ``work`` if it is of this very run, else a fresh one."""
    resume = latest_checkpoint(work)
    state = State()
    saved = read_json(resume / "trainer_state.json") if resume is not None else None
    if saved is not None and saved["fingerprint"] == fingerprint:
        run.parallel.load_state(run.body, run.optimizer, resume)
        state = State(**saved["state"])
        truncate_csv(work / f"metrics.rank{run.rank}.csv", state.step)
        log.info("resumed from %s at step %d", resume, state.step)
    elif work.exists() and run.rank == 0:
        shutil.rmtree(work)  # stale checkpoints of another configuration
    run.accelerator.wait_for_everyone()
    work.mkdir(parents=True, exist_ok=True)
    return state


def write_final_checkpoint(run, work: Path, model_dir: str, metrics_path: Path, out_dir: str, state: dict,
                           weights: dict | None) -> None:
    """The final (or best-validation) weights in HF format, with tokenizer, metrics and training state."""
    best = work / "best"
    if best.exists():  # the best validation's weights, not the gathered final ones
        final, weights = AutoModelForCausalLM.from_pretrained(best), None
    else:
        final = run.parallel.unwrap(run.body).lm
    with atomic_path(out_dir, directory=True) as tmp:
        write_pretrained(final, tmp, weights=weights, dtype=saved_dtype(run.cfg.precision))
        run.tokenizer.save_pretrained(tmp)
        if Path(model_dir, "generation_config.json").exists():
            shutil.copy(Path(model_dir, "generation_config.json"), tmp)
        shutil.copy(metrics_path, tmp / "training_metrics.csv")
        write_json(tmp / "training_state.json", state)
