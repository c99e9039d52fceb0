"""The training loop: one objective, one seed, one plain loop (nanoGPT style).

    fpa train --model M --train T --val V [--reference CACHE] --run-json RUN --seed S --work W --out C

AdamW (β = 0.9, 0.999), linear warmup then cosine decay, grad-norm clipping,
gradient accumulation over micro-batches of whole problem groups, bf16 autocast,
optional gradient checkpointing, data parallel through ``accelerate`` (DDP; each
rank takes a contiguous shard of the global batch), validation every
``eval_every`` steps with early stopping, resumable checkpoints in ``work/``
(model, optimizer, scheduler, RNG; the data order is a function of seed and step)
and the final checkpoint in HF format.
"""

from __future__ import annotations

import contextlib
import csv
import os
import dataclasses
import json
import logging
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, AutoTokenizer

from fpa.io import atomic_path, read_jsonl, sha256_path, write_json
from fpa.objectives import get_objective
from fpa.training import batches as B
from fpa.training.reference import make_reference
from fpa.training.stats import DIAGNOSTIC_KEYS, diagnostics, sequence_stats

log = logging.getLogger("fpa.train")


@dataclass(frozen=True)
class TrainConfig:
    lr: float = 1e-4
    min_lr_ratio: float = 0.0
    lr_decay_scale: float = 1.0
    warmup_steps: int = 10
    epochs: int = 1
    batch_problems: int = 8
    micro_batch_problems: int = 8
    max_grad_norm: float = 10.0
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.999)
    max_length: int = 2048
    precision: str = "fp32"
    gradient_checkpointing: bool = False
    chunk_size: int = 1024
    reference: str = "cached"
    eval_every: int = 20
    early_stopping_patience: int = 0
    checkpoint_every: int = 50
    threads: int = 1

    @classmethod
    def from_dict(cls, raw: dict) -> "TrainConfig":
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(raw) - names)
        if unknown:
            raise ValueError(f"training: unknown keys {unknown}; expected some of {sorted(names)}")
        return cls(**{**raw, "adam_betas": tuple(raw.get("adam_betas", cls.adam_betas))})


def lr_factor(step: int, total: int, cfg: TrainConfig) -> float:
    """Linear warmup to 1, then cosine to ``min_lr_ratio``; ``lr_decay_scale`` < 1 decays harder (Low LR)."""
    if step < cfg.warmup_steps:
        return (step + 1) / cfg.warmup_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, total - cfg.warmup_steps))
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
    return cfg.min_lr_ratio + (1.0 - cfg.min_lr_ratio) * cosine * cfg.lr_decay_scale ** progress


class HiddenStates(torch.nn.Module):
    """The causal LM as DDP sees it: forward gives final (post-norm) hidden states."""

    def __init__(self, lm):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids, attention_mask):
        return self.lm.get_decoder()(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    @property
    def head_weight(self):
        return self.lm.get_output_embeddings().weight


@dataclass
class State:
    step: int = 0
    best_val: float = math.inf
    evals_without_improvement: int = 0
    stopped_early: bool = False


def _latest_checkpoint(work: Path) -> Path | None:
    pointer = work / "latest"
    return work / pointer.read_text().strip() if pointer.exists() else None


def train(*, model_dir: str, train_path: str, val_path: str, reference_dir: str | None, objective_name: str,
          params: dict, training: dict, seed: int, work_dir: str, out_dir: str | None, code: str | None = None,
          stop_after: int | None = None) -> dict:
    """Train and write the final checkpoint to ``out_dir`` (atomically); returns the summary.

    ``stop_after`` ends the process after that many optimizer steps without writing
    the output (tests of exact resume).
    """
    cfg = TrainConfig.from_dict(training)
    torch.set_num_threads(cfg.threads)
    torch.manual_seed(seed)
    objective = get_objective(objective_name)
    hyper = objective.parse_params(params, "params")
    accelerator = Accelerator(cpu=not torch.cuda.is_available(),
                              mixed_precision="bf16" if cfg.precision == "bf16" else "no")
    rank, world = accelerator.process_index, accelerator.num_processes

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    lm = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if cfg.gradient_checkpointing:
        lm.gradient_checkpointing_enable()
    samples = [s for s in read_jsonl(train_path) if objective.sample_filter == "all" or s["correct"]]
    val_samples = [s for s in read_jsonl(val_path) if objective.sample_filter == "all" or s["correct"]]
    if not samples:
        raise ValueError(f"{train_path}: no samples pass the {objective.name} filter {objective.sample_filter!r}")
    encoded = B.encode_dataset(tokenizer, samples, cfg.max_length)
    val_encoded = B.encode_dataset(tokenizer, val_samples, cfg.max_length)
    groups, val_groups = B.make_groups(samples), B.make_groups(val_samples)
    reference = make_reference(objective, cfg.reference, reference_dir=reference_dir, model_dir=model_dir,
                               train_samples=samples, val_samples=val_samples, device=accelerator.device)

    body = HiddenStates(lm)
    optimizer = torch.optim.AdamW(body.parameters(), lr=cfg.lr, betas=cfg.adam_betas, weight_decay=cfg.weight_decay)
    total = cfg.epochs * B.steps_per_epoch(len(groups), cfg.batch_problems)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(step, total, cfg))
    # The scheduler stays outside ``prepare``: accelerate would step it once per process.
    body, optimizer = accelerator.prepare(body, optimizer)
    accelerator.register_for_checkpointing(scheduler)

    work = Path(work_dir)
    state = State()
    fingerprint = {"objective": objective.name, "params": dataclasses.asdict(hyper), "training": dataclasses.asdict(cfg),
                   "seed": seed, "world": world, "data": sha256_path(train_path), "code": code}
    resume = _latest_checkpoint(work)
    if resume is not None and json.loads((resume / "trainer_state.json").read_text())["fingerprint"] == fingerprint:
        accelerator.load_state(str(resume))
        state = State(**json.loads((resume / "trainer_state.json").read_text())["state"])
        _truncate_csv(work / f"metrics.rank{rank}.csv", state.step)
        log.info("resumed from %s at step %d", resume, state.step)
    elif work.exists() and rank == 0:
        shutil.rmtree(work)  # stale checkpoints of another configuration
    accelerator.wait_for_everyone()

    def forward_stats(micro, sample_list, enc, split):
        batch = B.collate(micro, enc, sample_list, tokenizer.pad_token_id)
        with accelerator.autocast():
            hidden = body(batch.input_ids.to(accelerator.device), batch.attention_mask.to(accelerator.device))
        ref = reference.inputs(batch, split) if reference else None
        batch = _to(batch, accelerator.device)
        stats = sequence_stats(hidden, accelerator.unwrap_model(body).head_weight, batch, objective, hyper,
                               reference=ref, pair_seed=seed, chunk_size=cfg.chunk_size)
        return stats, int(batch.targets.numel())

    def validate() -> float:
        body.eval()
        losses = []
        with torch.no_grad():
            for micro in B.micro_batches(B.shard(val_groups, rank, world), cfg.micro_batch_problems):
                stats, _ = forward_stats(micro, val_samples, val_encoded, "val")
                losses.append(objective.loss(stats, hyper)[0])
        body.train()
        local = torch.stack(losses).mean() if losses else torch.tensor(0.0)
        return accelerator.reduce(local.to(accelerator.device), reduction="mean").item()

    metrics_path = work / f"metrics.rank{rank}.csv"
    work.mkdir(parents=True, exist_ok=True)
    body.train()
    while state.step < total and not state.stopped_early:
        started = time.perf_counter()
        local = B.shard(B.global_batch(groups, state.step, batch_problems=cfg.batch_problems, seed=seed), rank, world)
        micros = B.micro_batches(local, cfg.micro_batch_problems)
        row, n_tokens = {}, 0
        for index, micro in enumerate(micros):
            sync = index == len(micros) - 1
            with accelerator.no_sync(body) if not sync and world > 1 else contextlib.nullcontext():
                stats, tokens = forward_stats(micro, samples, encoded, "train")
                loss, aux = objective.loss(stats, hyper)
                if not torch.isfinite(loss):
                    raise FloatingPointError(f"non-finite loss {loss.item()} at step {state.step}")
                accelerator.backward(loss / len(micros))
            n_tokens += tokens
            row = _accumulate(row, {"loss": loss.item(), **{k: v.item() for k, v in aux.items()},
                                    **diagnostics(stats)}, len(micros))
        grad_norm = accelerator.clip_grad_norm_(body.parameters(), cfg.max_grad_norm)
        row.update(step=state.step + 1, lr=scheduler.get_last_lr()[0], grad_norm=float(grad_norm),
                   tokens_per_s=n_tokens / (time.perf_counter() - started))
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        state.step += 1
        if state.step % cfg.eval_every == 0 or state.step == total:
            row["val_loss"] = validate()
            _track_validation(state, row["val_loss"], cfg, accelerator, body, work)
        _append_csv(metrics_path, row)
        if state.step % 10 == 0 or state.step == total:
            log.info("step %d/%d loss %.4f grad_norm %.3f lr %.2e", state.step, total, row["loss"],
                     row["grad_norm"], row["lr"])
        if state.step % cfg.checkpoint_every == 0 and state.step < total:
            _save_resumable(accelerator, work, state, fingerprint)
        if stop_after is not None and state.step >= stop_after:
            return {"stopped_after": state.step}

    summary = {"steps": state.step, "total_steps": total, "best_val_loss": state.best_val,
               "stopped_early": state.stopped_early, "train_problems": len(groups), "train_samples": len(samples)}
    if rank == 0:
        best = work / "best"
        final = AutoModelForCausalLM.from_pretrained(best) if best.exists() else accelerator.unwrap_model(body).lm
        with atomic_path(out_dir, directory=True) as tmp:
            final.save_pretrained(tmp, safe_serialization=True)
            tokenizer.save_pretrained(tmp)
            if Path(model_dir, "generation_config.json").exists():
                shutil.copy(Path(model_dir, "generation_config.json"), tmp)
            shutil.copy(metrics_path, tmp / "training_metrics.csv")
            write_json(tmp / "training_state.json", {**fingerprint, "summary": summary})
    accelerator.wait_for_everyone()
    return summary


def _to(batch: B.Batch, device) -> B.Batch:
    return B.Batch(**{f.name: getattr(batch, f.name).to(device) for f in dataclasses.fields(batch)})


def _accumulate(row: dict, values: dict, n: int) -> dict:
    """Mean over micro-batches (counts are summed)."""
    for key, value in values.items():
        share = value if isinstance(value, int) else value / n
        row[key] = row.get(key, 0) + share
    return row


def _append_csv(path: Path, row: dict) -> None:
    """Append ``row``; the header is fixed by the first row (plus every diagnostic column)."""
    if path.exists():
        with open(path) as handle:
            fields = handle.readline().strip().split(",")
    else:
        first = ["step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s"]
        fields = first + sorted((set(row) | set(DIAGNOSTIC_KEYS)) - set(first))
    with open(path, "a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        if handle.tell() == 0:
            writer.writeheader()
        writer.writerow(row)


def _truncate_csv(path: Path, step: int) -> None:
    """Drop rows logged after the checkpoint a run resumes from."""
    if not path.exists():
        return
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        csv.writer(handle).writerows([rows[0]] + [r for r in rows[1:] if int(r[0]) <= step])


def _track_validation(state: State, val: float, cfg: TrainConfig, accelerator, body, work: Path) -> None:
    if val < state.best_val:
        state.best_val, state.evals_without_improvement = val, 0
        if cfg.early_stopping_patience and accelerator.is_main_process:
            with atomic_path(work / "best", directory=True) as tmp:
                accelerator.unwrap_model(body).lm.save_pretrained(tmp, safe_serialization=True)
    else:
        state.evals_without_improvement += 1
        if cfg.early_stopping_patience and state.evals_without_improvement >= cfg.early_stopping_patience:
            state.stopped_early = True


def _save_resumable(accelerator, work: Path, state: State, fingerprint: dict) -> None:
    """Every rank writes its part (RNG state) into one temp dir; rank 0 renames it into place."""
    name = f"step-{state.step:08d}"
    tmp = work / f".{name}.tmp"
    if accelerator.is_main_process:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    accelerator.wait_for_everyone()
    accelerator.save_state(str(tmp))
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        write_json(tmp / "trainer_state.json", {"fingerprint": fingerprint, "state": dataclasses.asdict(state)})
        previous = _latest_checkpoint(work)
        os.replace(tmp, work / name)
        with atomic_path(work / "latest") as pointer:
            pointer.write_text(name)
        if previous is not None and previous.name != name:
            shutil.rmtree(previous, ignore_errors=True)
    accelerator.wait_for_everyone()
