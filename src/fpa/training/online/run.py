"""One online run: TRL's GRPO loop on the training problems, recorded as an offline run is.

    fpa train-online --model M --problems P --exclude VAL --run-json RUN --seed S --work W --out C --snapshots D

What the rest of the DAG reads is the same as for ``fpa train``: an HF-format checkpoint with
``training_metrics.csv`` (one row per optimizer step, ``elapsed_s`` the run's wall clock) and
``training_state.json``, and HF-format snapshots every ``training.snapshot_every`` optimizer
steps, so the curve, evaluation and model-selection rules run unchanged. TRL's own resumable
checkpoints live in ``work/`` (every ``training.checkpoint_every`` steps); a re-started job of the
same run resumes from the latest, its wall clock going on from there.

``training.parallel: fsdp`` runs TRL under accelerate's FSDP2 plugin (each decoder layer, as the
model's ``_no_split_modules`` names it, then the root), with ``fsdp_reshard_after_forward`` and
``fsdp_cpu_offload``; its compute dtype follows ``training.precision`` (accelerate's mixed-precision
policy), not ``fsdp_param_dtype`` / ``fsdp_reduce_dtype``, which only ``fpa train`` reads. The
HF-format weights (snapshots, checkpoint) are gathered on every rank and written by rank 0. GPUs
only: accelerate 1.15 enables FSDP for accelerator ranks alone (``AcceleratorState``), so on CPU
the setting is refused rather than silently trained as DDP.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

from fpa.io import atomic_path, read_json, write_json
from fpa.online import get_online_method
from fpa.online.base import COLOCATED_VLLM_SHARE
from fpa.training.checkpoints import save_pretrained, snapshot_path
from fpa.training.metrics import append_csv, elapsed_by_step, truncate_csv
from fpa.training.online.reward import grader_reward
from fpa.training.online.settings import trl_settings
from fpa.training.parallel import first_names, make_parallel
from fpa.training.session import TrainConfig

log = logging.getLogger("fpa.train_online")

# TRL's log keys -> the metrics CSV's columns
LOGGED = {"loss": "loss", "learning_rate": "lr", "grad_norm": "grad_norm", "reward": "reward",
          "reward_std": "reward_std", "frac_reward_zero_std": "frac_reward_zero_std",
          "completions/mean_length": "completion_length", "entropy": "entropy", "kl": "kl",
          "clip_ratio/region_mean": "clip_ratio", "dynamic_sampling/rounds": "sampling_rounds",
          "dynamic_sampling/uniform_groups_kept": "uniform_groups_kept"}
METRICS_FILE = "metrics.csv"


class RunRecorder(TrainerCallback):
    """One metrics row per optimizer step, with the run's wall clock, and the snapshots."""

    def __init__(self, work: Path, tokenizer, snapshot_every: int, clock_zero: float, stop_after: int | None = None):
        self.work, self.tokenizer, self.snapshot_every, self.clock_zero = work, tokenizer, snapshot_every, clock_zero
        self.stop_after = stop_after
        self.trainer = None  # set once the trainer exists: snapshots gather its (sharded) model

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and logs and "loss" in logs:
            row = {"step": state.global_step, "elapsed_s": time.perf_counter() - self.clock_zero}
            row.update({column: logs[key] for key, column in LOGGED.items() if key in logs})
            append_csv(self.work / METRICS_FILE, row)

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if self.snapshot_every and state.global_step % self.snapshot_every == 0:
            _save_policy(self.trainer, snapshot_path(self.work, state.global_step), self.tokenizer)
        if self.stop_after is not None and state.global_step >= self.stop_after:
            control.should_training_stop = True


def train_online(*, model_dir: str, problems: list[dict], prompts: list[str], method: str, params: dict,
                 training: dict, grader: str, seed: int, work_dir: str, out_dir: str | None,
                 generation: dict, processes: int = 1, code: str | None = None, stop_after: int | None = None) -> dict:
    """Train ``model_dir`` online on ``problems`` (with their rendered ``prompts``); write the final
    checkpoint to ``out_dir`` (rank 0; atomically) and return the run's summary.

    ``stop_after`` ends training after that many optimizer steps without writing the output
    (tests of resume).
    """
    from datasets import Dataset
    from trl import GRPOConfig

    from fpa.training.online.trainer import OnlineTrainer

    started = time.perf_counter()
    hyper = get_online_method(method).parse_params(params, "params")
    work = Path(work_dir)
    fingerprint = json.loads(json.dumps({"method": method, "params": dataclasses.asdict(hyper), "training": training,
                                         "seed": seed, "processes": processes, "problems": len(problems),
                                         "code": code}))
    vllm = generation["backend"] == "vllm" and torch.cuda.is_available()
    config = GRPOConfig(
        output_dir=str(work / "trl"), seed=seed, data_seed=seed, logging_steps=1, report_to="none",
        save_strategy="steps", save_steps=training["checkpoint_every"], save_total_limit=1,
        remove_unused_columns=False, dataloader_num_workers=0, disable_tqdm=True, use_cpu=not torch.cuda.is_available(),
        use_vllm=vllm, vllm_mode="colocate", vllm_tensor_parallel_size=generation["tensor_parallel_size"],
        vllm_gpu_memory_utilization=COLOCATED_VLLM_SHARE,
        **trl_settings(hyper, training, processes=processes), **_fsdp_settings(training),
    )
    config.device  # sets up the process group of the job's ranks (TrainingArguments._setup_devices)
    ranks = config.distributed_state
    with ranks.main_process_first():  # rank 0 prepares the work directory; the others then only read it
        resume = _resumable(work, fingerprint, prepare=ranks.is_main_process)
    elapsed_before = _elapsed_at(work / METRICS_FILE, resume)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    dataset = Dataset.from_list([{"prompt": prompt, "answer": problem["answer"], "problem_id": problem["id"]}
                                 for problem, prompt in zip(problems, prompts)])
    recorder = RunRecorder(work, tokenizer, training["snapshot_every"], clock_zero=started - elapsed_before,
                           stop_after=stop_after)
    trainer = OnlineTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
                            reward_funcs=[grader_reward(grader)], callbacks=[recorder],
                            dynamic_sampling_rounds=hyper.dynamic_sampling_rounds)
    recorder.trainer = trainer
    trainer.train(resume_from_checkpoint=resume)
    steps = trainer.state.global_step
    if stop_after is not None:
        return {"stopped_after": steps}
    summary = {"steps": steps, "total_steps": hyper.optimizer_steps, "rollouts": hyper.rollout_steps,
               "resumed_from_step": int(Path(resume).name.split("-")[1]) if resume else 0,
               "train_problems": len(problems), "elapsed_s": time.perf_counter() - recorder.clock_zero,
               "optimizer_steps_per_rollout": hyper.batch_prompts // hyper.mini_batch_prompts,
               "sharded": _sharded_parameters(trainer.model)}
    weights = _full_weights(trainer)
    if out_dir is not None and trainer.accelerator.is_main_process:
        with atomic_path(out_dir, directory=True) as tmp:
            trainer.accelerator.unwrap_model(trainer.model).save_pretrained(tmp, state_dict=weights,
                                                                            safe_serialization=True)
            tokenizer.save_pretrained(tmp)
            if Path(model_dir, "generation_config.json").exists():
                shutil.copy(Path(model_dir, "generation_config.json"), tmp)
            shutil.copy(work / METRICS_FILE, tmp / "training_metrics.csv")
            write_json(tmp / "training_state.json", {**fingerprint, "summary": summary})
    trainer.accelerator.wait_for_everyone()
    return summary


def _fsdp_settings(training: dict) -> dict:
    """``GRPOConfig``'s FSDP arguments for ``training.parallel: fsdp`` (none for ddp)."""
    cfg = TrainConfig.from_dict(training)
    make_parallel(cfg, accelerator=None)  # the names checked before any model is loaded
    if cfg.parallel != "fsdp":
        return {}
    if not torch.cuda.is_available():
        raise ValueError("training.parallel: fsdp: fpa train-online shards through accelerate, which applies its "
                         "FSDP plugin to GPU ranks only and would train unsharded DDP replicas on CPU; expected "
                         "'ddp' on CPU, got 'fsdp'")
    return {"fsdp": True, "fsdp_config": {"version": 2, "auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
                                          "reshard_after_forward": cfg.fsdp_reshard_after_forward,
                                          "cpu_offload": cfg.fsdp_cpu_offload, "state_dict_type": "FULL_STATE_DICT"}}


def _full_weights(trainer) -> dict | None:
    """The model's full state dict under FSDP (a gather: every rank calls it); None: the model's own."""
    if not trainer.is_fsdp_enabled:
        return None
    return first_names(trainer.accelerator.get_state_dict(trainer.model), trainer.model)


def _sharded_parameters(model) -> int:
    """How many of the model's parameters are FSDP shards (DTensors): 0 unless FSDP wraps it."""
    from torch.distributed.tensor import DTensor

    return sum(isinstance(weight, DTensor) for weight in model.parameters())


def _save_policy(trainer, directory: Path, tokenizer) -> None:
    """The trainer's model in HF format: every rank gathers (FSDP), rank 0 writes."""
    weights = _full_weights(trainer)
    if trainer.accelerator.is_main_process:
        save_pretrained(trainer.accelerator.unwrap_model(trainer.model), directory, tokenizer=tokenizer,
                        weights=weights)


def _resumable(work: Path, fingerprint: dict, *, prepare: bool) -> str | None:
    """TRL's latest checkpoint in ``work`` if it is of this very run. The process that ``prepare``s
    (rank 0) also cuts the metrics log back to that checkpoint, or replaces stale work of another
    run with an empty directory marked with this run's fingerprint."""
    from transformers.trainer_utils import get_last_checkpoint

    marker = work / "fingerprint.json"
    if marker.exists() and read_json(marker) == fingerprint and (work / "trl").is_dir():
        last = get_last_checkpoint(str(work / "trl"))
        if last is not None:
            if prepare:
                truncate_csv(work / METRICS_FILE, int(Path(last).name.split("-")[1]))
            log.info("resuming from %s", last)
            return last
    if prepare:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        write_json(marker, fingerprint)
    return None


def _elapsed_at(metrics: Path, resume: str | None) -> float:
    """The wall clock of the run at the checkpoint it resumes from (0 for a fresh run)."""
    if resume is None or not metrics.exists():
        return 0.0
    elapsed = elapsed_by_step(metrics)
    return elapsed[max(elapsed)] if elapsed else 0.0
