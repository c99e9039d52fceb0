"""Build the toy base model: a tiny Qwen2 fine-tuned on slip-injected toy traces.

The result is an ordinary Hugging Face model directory (safetensors weights,
tokenizer, generation config), so every later stage loads it exactly as it
would load a real base model::

    from fpa.toy.model import build_toy_model
    from fpa.toy.settings import TOY_PRESETS
    build_toy_model("resources/toy-base", TOY_PRESETS["default"])   # ~2-4 min on 2 cores
    build_toy_model("/tmp/toy-ci", TOY_PRESETS["ci"])              # seconds; accuracy > 0 only

The slip rate sets how often the model's own traces go wrong, and thereby its
base Pass@1 (see ``fpa.toy.settings.TOY_PRESETS`` for the calibration). ``metrics.json`` in the
directory stores the full config, the loss curve and the build time.
"""

from __future__ import annotations

import math
import os
import random
import time
from dataclasses import asdict

import torch
from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

from fpa.io import atomic_path, write_json
from fpa.progress import progress
from fpa.samples.prompts import render_prompt
from fpa.samples.tokenize import encode_sample
from fpa.toy.settings import ToyModelConfig
from fpa.toy.task import chain_lengths, make_mixed_problems, render_trace
from fpa.toy.tokenizer import build_tokenizer

MAX_LENGTH = 256  # tokens (= bytes) beyond the template's own text; a 6-operand problem + trace is ~80


def sequence_budget(cfg: ToyModelConfig) -> int:
    """Tokens a training sequence may use: the template's own text plus ``MAX_LENGTH``.

    A long template (the paper's math prompt is ~190 bytes) must not cut the traces
    short, or the model never learns to end them with the boxed answer.
    """
    return len(render_prompt(cfg.prompt_template, "").encode()) + MAX_LENGTH


def model_config(cfg: ToyModelConfig, tokenizer) -> Qwen2Config:
    return Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=cfg.d_model,
        intermediate_size=cfg.d_ff,
        num_hidden_layers=cfg.n_layers,
        num_attention_heads=cfg.n_heads,
        num_key_value_heads=cfg.n_heads,
        head_dim=64,
        max_position_embeddings=sequence_budget(cfg),
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )


def get_batch(problems: list[str], cfg: ToyModelConfig, tokenizer, rng: random.Random) -> dict[str, torch.Tensor]:
    """A right-padded batch of fresh slip-injected traces; the loss sees completion + eos only."""
    budget = sequence_budget(cfg)
    samples = [
        encode_sample(tokenizer, render_prompt(cfg.prompt_template, p),
                      render_trace(p, rng, cfg.slip_rate, cfg.trace_style), budget)
        for p in rng.choices(problems, k=cfg.batch_size)
    ]
    width = max(len(s.input_ids) for s in samples)
    input_ids = torch.full((len(samples), width), tokenizer.pad_token_id)
    labels = torch.full((len(samples), width), -100)
    attention_mask = torch.zeros((len(samples), width), dtype=torch.long)
    for row, s in enumerate(samples):
        n = len(s.input_ids)
        input_ids[row, :n] = torch.tensor(s.input_ids)
        labels[row, s.prompt_len : n] = input_ids[row, s.prompt_len : n]
        attention_mask[row, :n] = 1
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


def get_lr(step: int, cfg: ToyModelConfig) -> float:
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = (step - cfg.warmup_steps) / max(1, cfg.steps - cfg.warmup_steps)
    return cfg.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))


def train(model, problems: list[str], cfg: ToyModelConfig, tokenizer) -> list[dict]:
    """Plain SFT loop; returns the loss curve (mean loss per ``log_every`` steps)."""
    rng = random.Random(f"toy-sft/{cfg.seed}")
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=cfg.lr, betas=(0.9, 0.95))
    model.train()
    curve, window = [], []
    bar = progress(cfg.steps, "toy base model SFT", unit="step")
    for step in range(cfg.steps):
        for group in optimizer.param_groups:
            group["lr"] = get_lr(step, cfg)
        loss = model(**get_batch(problems, cfg, tokenizer, rng), use_cache=False).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        window.append(loss.item())
        if len(window) == cfg.log_every or step == cfg.steps - 1:
            curve.append({"step": step + 1, "loss": sum(window) / len(window), "lr": get_lr(step, cfg)})
            window = []
            bar.set_postfix(loss=f"{curve[-1]['loss']:.4f}", refresh=False)
        bar.update(1)
    bar.close()
    model.eval()
    return curve


def sft_problems(cfg: ToyModelConfig) -> list[str]:
    """The SFT chains: ``n_train_problems`` of the "sft" split, split evenly over the chain lengths."""
    lengths = chain_lengths(cfg.n_operands, cfg.min_operands)
    return [r["problem"] for r in make_mixed_problems(cfg.n_train_problems, cfg.seed, split="sft", lengths=lengths)]


def build_toy_model(out_dir: str | os.PathLike, cfg: ToyModelConfig = ToyModelConfig(), *, threads: int | None = None) -> dict:
    """Train the toy base model and write it to ``out_dir`` atomically; returns the metrics.

    ``threads`` sets ``torch.set_num_threads`` (results may differ in the last
    bits across thread counts). Same config and threads => same weights.
    """
    if threads is not None:
        torch.set_num_threads(threads)
    start, cpu_start = time.perf_counter(), time.process_time()
    torch.manual_seed(cfg.seed)
    tokenizer = build_tokenizer()
    tokenizer.model_max_length = sequence_budget(cfg)
    problems = sft_problems(cfg)
    model = Qwen2ForCausalLM(model_config(cfg, tokenizer))
    curve = train(model, problems, cfg, tokenizer)
    metrics = {
        "config": asdict(cfg),
        "n_params": sum(p.numel() for p in model.parameters()),
        "final_loss": curve[-1]["loss"],
        "loss_curve": curve,
        "threads": torch.get_num_threads(),
        "train_seconds": round(time.perf_counter() - start, 2),
        "cpu_seconds": round(time.process_time() - cpu_start, 2),  # well below train_seconds * threads: CPU was shared
        "torch_version": torch.__version__,
    }
    generation_config = GenerationConfig(
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=0.7,
        top_p=1.0,
        top_k=0,
        max_new_tokens=128,
    )
    with atomic_path(out_dir, directory=True) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        generation_config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        write_json(tmp / "metrics.json", metrics)
    return metrics
