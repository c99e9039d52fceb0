"""A training run's settings (``TrainConfig``, the schema's ``training`` block) and everything its steps
need, built once: model, data splits, reference, optimizer and schedule, prepared by accelerate
(``open_session``). The steps themselves are ``fpa.training.loop``'s."""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass

import torch
from accelerate import Accelerator, DistributedDataParallelKwargs
from transformers import AutoModelForCausalLM, AutoTokenizer

from fpa.precision import autocast_dtype, torch_name
from fpa.io import read_jsonl
from fpa.memory.training import objective_chunk_rows
from fpa.objectives import get_objective
from fpa.reference.inputs import make_reference
from fpa.training import batches as B
from fpa.training.body import fused_adamw, is_packed, make_deterministic, prepare_layers
from fpa.training.parallel import DataParallel, Policy, make_parallel

log = logging.getLogger("fpa.train")


@dataclass(frozen=True)
class TrainConfig:
    """The ``training`` settings of a run (the config's, filled from the schema). Each field and its
    default is the schema's ``$defs.training`` (tests/test_defaults_once.py ties them), for code that
    builds one without a config."""

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
    adamw: str = "auto"  # fused on CUDA, torch's choice elsewhere (fpa.training.body)
    max_length: int = 2048
    precision: str = "fp32"
    head_precision: str = "auto"
    gradient_checkpointing: bool = False
    checkpoint_every_layers: int = 1
    compile_layers: bool = False
    attention: str = "packed"  # or masked / causal: padded micro-batches (fpa.training.body)
    deterministic: bool = False
    chunk_size: int | str = 1024  # or "auto": from head_memory_mb
    head_memory_mb: float = 1024.0
    fused_head: bool = False
    reference: str = "cached"
    eval_every: int = 20
    early_stopping_patience: int = 0
    checkpoint_every: int = 50
    snapshot_every: int = 0
    diagnostics: bool = True
    parallel: str = "ddp"
    fsdp_reshard_after_forward: bool = True
    fsdp_cpu_offload: bool = False
    fsdp_param_dtype: str = "auto"
    fsdp_reduce_dtype: str = torch_name("fp32")

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


@dataclass
class Split:
    """Samples of one split with their encodings and problem groups."""

    name: str
    samples: list[dict]
    encoded: list
    groups: list[B.Group]


@dataclass
class Session:
    """Everything one training run's steps need."""

    cfg: TrainConfig
    objective: object
    hyper: object
    seed: int
    accelerator: Accelerator
    parallel: DataParallel
    tokenizer: object
    body: torch.nn.Module
    optimizer: torch.optim.Optimizer
    scheduler: object
    reference: object
    train: Split
    val: Split
    total_steps: int

    @property
    def rank(self) -> int:
        return self.accelerator.process_index

    @property
    def world(self) -> int:
        return self.accelerator.num_processes


def load_split(name: str, path: str, objective, tokenizer, max_length: int) -> Split:
    samples = [s for s in read_jsonl(path) if objective.sample_filter == "all" or s["correct"]]
    return Split(name, samples, B.encode_dataset(tokenizer, samples, max_length), B.make_groups(samples))


def open_session(model_dir: str, train_path: str, val_path: str, reference_dir: str | None, objective_name: str,
                  params: dict, cfg: TrainConfig, seed: int) -> tuple[Session, int]:
    """Model, data, reference, optimizer and schedule, prepared by accelerate; returns (session, total steps)."""
    if cfg.deterministic:
        make_deterministic()
    torch.manual_seed(seed)
    objective = get_objective(objective_name)
    hyper = objective.parse_params(params, "params")
    # No buffer broadcast in DDP's forward: the buffers (rotary frequencies) are the same on every
    # rank, and ranks with different numbers of forwards (validation) would deadlock. Autocast is
    # the Policy's, around the decoder only: accelerate's would cover the loss head too.
    accelerator = Accelerator(cpu=not torch.cuda.is_available(), mixed_precision="no",
                              kwargs_handlers=[DistributedDataParallelKwargs(broadcast_buffers=False)])
    parallel = make_parallel(cfg, accelerator)
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    lm = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    if cfg.chunk_size == "auto":
        cfg = dataclasses.replace(cfg, chunk_size=objective_chunk_rows(cfg.chunk_size, cfg.head_memory_mb,
                                                                       lm.config.vocab_size, objective, cfg.reference))
        log.info("loss head: %d rows per chunk (head_memory_mb %s)", cfg.chunk_size, cfg.head_memory_mb)
    prepare_layers(lm, cfg)
    train_split = load_split("train", train_path, objective, tokenizer, cfg.max_length)
    val_split = load_split("val", val_path, objective, tokenizer, cfg.max_length)
    if not train_split.samples:
        raise ValueError(f"{train_path}: no samples pass the {objective.name} filter {objective.sample_filter!r}")
    reference = make_reference(objective, cfg.reference, reference_dir=reference_dir, model_dir=model_dir,
                               train_samples=train_split.samples, val_samples=val_split.samples,
                               device=accelerator.device, diagnostics=cfg.diagnostics,
                               autocast=autocast_dtype(cfg.precision), packed=is_packed(cfg.attention))
    policy = Policy(lm, autocast_dtype(cfg.precision))
    body, optimizer = parallel.prepare(policy, lambda weights: torch.optim.AdamW(
        weights, lr=cfg.lr, betas=cfg.adam_betas, weight_decay=cfg.weight_decay,
        fused=fused_adamw(cfg.adamw, accelerator.device)))
    total = cfg.epochs * B.steps_per_epoch(len(train_split.groups), cfg.batch_problems)
    # The scheduler stays outside ``prepare``: accelerate would step it once per process.
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(step, total, cfg))
    accelerator.register_for_checkpointing(scheduler)
    session = Session(cfg, objective, hyper, seed, accelerator, parallel, tokenizer, body, optimizer, scheduler,
                      reference, train_split, val_split, total)
    return session, total
