"""The training loop: one objective, one seed, one plain loop (nanoGPT style).

    fpa train --model M --train T --val V [--reference CACHE] --run-json RUN --seed S --work W --out C

AdamW (β = 0.9, 0.999), linear warmup then cosine decay, grad-norm clipping,
gradient accumulation over micro-batches of whole problem groups, bf16 autocast,
optional gradient checkpointing, data parallel (DDP or FSDP2, ``fpa.training.parallel``;
each rank takes a contiguous shard of the global batch), validation every
``eval_every`` steps with early stopping, resumable checkpoints in ``work/``
(model, optimizer, scheduler, RNG; the data order is a function of seed and step),
HF-format snapshots every ``snapshot_every`` steps (for accuracy through training)
and the final checkpoint in HF format. The run's settings and what its steps need (model, data,
reference, optimizer) are ``fpa.training.session``'s.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import torch

from fpa.io import sha256_path
from fpa.progress import progress
from fpa.samples.pad_token import pad_token_id
from fpa.training import batches as B
from fpa.training.batch_statistic import batch_mean, with_batch_mean
from fpa.training.body import attention_mask_for, is_packed
from fpa.training.checkpoints import (resume_state, save_policy, save_resumable, snapshot_path, track_validation,
                                      write_final_checkpoint)
from fpa.training.metrics import accumulate, append_csv, tensorboard, throughput
from fpa.training.session import Session, Split, TrainConfig, open_session
from fpa.training.stats import diagnostics, sequence_stats



def _forward_stats(run: Session, micro: list[B.Group], split: Split, body: torch.nn.Module,
                   upcoming: list[B.Group] | None = None):
    """The objective's statistics of ``micro``; the reference rows of ``upcoming`` (the next micro-batch)
    are read meanwhile."""
    batch = B.collate(micro, split.encoded, split.samples, pad_token_id(run.tokenizer), is_packed(run.cfg.attention))
    ref = run.reference.inputs(batch, split.name) if run.reference else None
    if run.reference and upcoming:
        run.reference.prefetch(B.sample_indices(upcoming), split.name)
    batch = _to(batch, run.accelerator.device)

    def statistics(hidden, head_weight):
        return sequence_stats(hidden, head_weight, batch, run.objective, run.hyper, reference=ref,
                              pair_seed=run.seed, chunk_size=run.cfg.chunk_size,
                              head_precision=run.cfg.head_precision, fused_head=run.cfg.fused_head)

    mask = attention_mask_for(run.cfg.attention, batch.attention_mask)
    return (body(batch.input_ids, mask, statistics, batch.position_ids, batch.sequence_lengths),
            int(batch.targets.numel()))


def _with_next(micros: list, after: list[B.Group] | None = None) -> list[tuple]:
    """Each micro-batch with the one after it (``after`` after the last)."""
    return list(zip(micros, [*micros[1:], after]))


def _rank_micro_batches(run: Session, step: int) -> tuple[list[list[B.Group]], int, int]:
    """This rank's micro-batches of global batch ``step`` (``B.rank_micro_batches``)."""
    batch = B.global_batch(run.train.groups, step, batch_problems=run.cfg.batch_problems, seed=run.seed)
    return B.rank_micro_batches(batch, run.rank, run.world, run.cfg.micro_batch_problems)


def _validate(run: Session) -> float:
    """Mean objective loss over the validation split (all ranks)."""
    run.body.eval()
    # every rank runs as many forwards (padded): FSDP gathers weights inside each
    body = run.parallel.evaluation_module(run.body)
    micros, own, _ = B.rank_micro_batches(run.val.groups, run.rank, run.world, run.cfg.micro_batch_problems)
    with torch.no_grad():
        stats = [_forward_stats(run, micro, run.val, body, upcoming)[0]
                 for micro, upcoming in _with_next(micros)][:own]  # padding copies dropped
        mean = _batch_mean(run, stats)  # over the whole validation split
        losses = [run.objective.loss(with_batch_mean(s, mean), run.hyper)[0] for s in stats]
    run.body.train()
    local = torch.stack(losses).mean() if losses else torch.tensor(0.0)
    return run.accelerator.reduce(local.to(run.accelerator.device), reduction="mean").item()


def _batch_mean(run: Session, own: list) -> torch.Tensor | None:
    """The objective's batch statistic averaged over every rank's ``own`` statistics, if it has one."""
    return batch_mean(run.objective, run.hyper, own,
                      lambda total: run.accelerator.reduce(total.to(run.accelerator.device), reduction="sum"))


def _optimizer_batch_mean(run: Session, micros: list, own: int) -> torch.Tensor | None:
    """The batch statistic of the optimizer batch at the current weights, in a no-gradient pass over
    every micro-batch (padding copies included: FSDP gathers weights inside each forward); its last
    reads ahead the first again, for the gradient pass."""
    if run.objective.batch_statistic is None:
        return None
    with torch.no_grad():
        stats = [_forward_stats(run, micro, run.train, run.parallel.evaluation_module(run.body), upcoming)[0]
                 for micro, upcoming in _with_next(micros, after=micros[0])]
    return _batch_mean(run, stats[:own])


def _optimizer_step(run: Session, step: int) -> dict:
    """One optimizer step over this rank's shard of global batch ``step``; returns its metrics row."""
    started = time.perf_counter()
    cfg = run.cfg
    # Every micro-batch of every rank weighs 1 / (all ranks' micro-batches) once DDP / FSDP average
    # the ranks' gradients, as in one process; a rank's padding copies weigh 0.
    micros, own, count = _rank_micro_batches(run, step)
    weights = [run.world] * own + [0] * (len(micros) - own)
    # the last micro-batch reads ahead the next step's first: no step begins with a read it waits on
    following = _rank_micro_batches(run, step + 1)[0][0] if step + 1 < run.total_steps else None
    mean = _optimizer_batch_mean(run, micros, own)
    row, n_tokens, n_examples = {}, 0, 0
    for index, ((micro, upcoming), weight) in enumerate(zip(_with_next(micros, after=following), weights)):
        with run.parallel.gradient_sync(run.body, enabled=index == len(micros) - 1):
            stats, tokens = _forward_stats(run, micro, run.train, run.body, upcoming)
            stats = with_batch_mean(stats, mean)
            loss, aux = run.objective.loss(stats, run.hyper)
            if not torch.isfinite(loss):
                raise FloatingPointError(f"non-finite loss {loss.item()} at step {step}")
            run.accelerator.backward(loss * weight / count)
        if weight or not own:  # a rank without problems logs its copy's metrics
            n_tokens += tokens
            n_examples += sum(len(group.samples) for group in micro)
            row = accumulate(row, {"loss": loss.item(), **{k: v.item() for k, v in aux.items()},
                                    **diagnostics(stats)}, own or len(micros))
    grad_norm = run.parallel.clip_grad_norm(run.body, cfg.max_grad_norm)
    row.update(step=step + 1, lr=run.scheduler.get_last_lr()[0], grad_norm=grad_norm,
               tokens_per_s=n_tokens / (time.perf_counter() - started),
               examples_per_s=n_examples / (time.perf_counter() - started))
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    return row


def train(*, model_dir: str, train_path: str, val_path: str, reference_dir: str | None, objective_name: str,
          params: dict, training: dict, seed: int, work_dir: str, out_dir: str | None, code: str | None = None,
          stop_after: int | None = None) -> dict:
    """Train and write the final checkpoint to ``out_dir`` (atomically); returns the summary.

    ``stop_after`` ends the process after that many optimizer steps without writing
    the output (tests of exact resume).
    """
    started = time.perf_counter()
    cfg = TrainConfig.from_dict(training)
    run, total = open_session(model_dir, train_path, val_path, reference_dir, objective_name, params, cfg, seed)
    work = Path(work_dir)
    fingerprint = {"objective": run.objective.name, "params": dataclasses.asdict(run.hyper),
                   "training": dataclasses.asdict(cfg), "seed": seed, "world": run.world,
                   "data": sha256_path(train_path), "code": code}
    fingerprint = json.loads(json.dumps(fingerprint))  # as stored: tuples become lists
    state = resume_state(run, work, fingerprint)
    resumed_from = state.step
    clock_zero = started - state.elapsed_s  # a resumed run's clock goes on from its checkpoint's
    metrics_path = work / f"metrics.rank{run.rank}.csv"
    board = tensorboard(work) if run.rank == 0 else None
    bar = progress(total, f"train {run.objective.name}", unit="step", initial=state.step, disable=run.rank != 0)
    run.body.train()
    while state.step < total and not state.stopped_early:
        row = _optimizer_step(run, state.step)
        state.step += 1
        state.elapsed_s = row["elapsed_s"] = time.perf_counter() - clock_zero
        if state.step % cfg.eval_every == 0 or state.step == total:
            row["val_loss"] = _validate(run)
            track_validation(state, row["val_loss"], cfg, run, work)
        append_csv(metrics_path, row)
        for key, value in row.items() if board is not None else ():
            board.add_scalar(key, value, state.step)
        bar.set_postfix(loss=f"{row['loss']:.4f}", grad_norm=f"{row['grad_norm']:.3f}", lr=f"{row['lr']:.2e}",
                        refresh=False)
        bar.update(1)
        if cfg.snapshot_every and state.step % cfg.snapshot_every == 0:
            save_policy(run, snapshot_path(work, state.step), tokenizer=True)
        if state.step % cfg.checkpoint_every == 0 and state.step < total:
            save_resumable(run, work, state, fingerprint)
        if stop_after is not None and state.step >= stop_after:
            bar.close()
            return {"stopped_after": state.step}
    bar.close()
    if cfg.snapshot_every and state.step % cfg.snapshot_every:  # accuracy through training reaches the last step
        save_policy(run, snapshot_path(work, state.step), tokenizer=True)
    if board is not None:
        board.close()
    summary = {"steps": state.step, "total_steps": total, "resumed_from_step": resumed_from,
               "best_val_loss": state.best_val,
               "stopped_early": state.stopped_early, "train_problems": len(run.train.groups),
               "train_samples": len(run.train.samples), "elapsed_s": time.perf_counter() - clock_zero,
               "throughput": throughput(metrics_path, run.accelerator.device)}
    weights = run.parallel.full_state_dict(run.body)  # a gather under FSDP: every rank, best kept or not
    if run.rank == 0:
        write_final_checkpoint(run, work, model_dir, metrics_path, out_dir, {**fingerprint, "summary": summary}, weights)
    run.accelerator.wait_for_everyone()
    return summary


def _to(batch: B.Batch, device) -> B.Batch:
    """``batch`` with its tensors on ``device`` (its sequence lengths stay on the host)."""
    return B.Batch(**{f.name: value.to(device) if isinstance(value := getattr(batch, f.name), torch.Tensor) else value
                      for f in dataclasses.fields(batch)})
