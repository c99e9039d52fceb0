"""TRL's ``GRPOConfig`` settings of an online run: its method's ``OnlineParams`` and the run's
shared ``training`` settings."""

from __future__ import annotations

from typing import Mapping

from fpa.online.base import OnlineParams

def _training_device() -> str:
    """Where TRL's trainer puts the policy: the GPU where there is one."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def trl_settings(params: OnlineParams, training: Mapping, *, processes: int) -> dict:
    """``GRPOConfig`` keyword arguments for ``params`` and the run's shared ``training`` settings
    (learning rate, warmup, clipping, AdamW, precision, snapshot and checkpoint steps)."""
    completions_per_step = params.mini_batch_prompts * params.num_generations
    per_forward = params.micro_batch * processes
    if completions_per_step % per_forward:
        raise ValueError(f"micro_batch: {params.mini_batch_prompts} prompts x {params.num_generations} completions "
                         f"per optimizer step must split into forwards of {params.micro_batch} completions on "
                         f"{processes} processes")
    accumulation = completions_per_step // per_forward
    from fpa.training.body import fused_adamw  # torch: here, not where the config is planned

    rollout_forwards = accumulation * params.batch_prompts // params.mini_batch_prompts
    return {
        "learning_rate": training["lr"], "lr_scheduler_type": "constant_with_warmup",
        "warmup_steps": training["warmup_steps"], "max_grad_norm": training["max_grad_norm"],
        "weight_decay": training["weight_decay"], "adam_beta1": training["adam_betas"][0],
        "adam_beta2": training["adam_betas"][1],
        "optim": "adamw_torch_fused" if fused_adamw(training["adamw"], _training_device()) else "adamw_torch",
        "bf16": training["precision"] == "bf16",
        "gradient_checkpointing": training["gradient_checkpointing"],
        "per_device_train_batch_size": params.micro_batch, "gradient_accumulation_steps": accumulation,
        "steps_per_generation": rollout_forwards, "num_generations": params.num_generations,
        "max_steps": params.optimizer_steps, "temperature": params.temperature, "top_p": 1.0, "top_k": 0,
        "max_completion_length": params.max_new_tokens, "loss_type": params.loss_type,
        "epsilon": params.epsilon, "epsilon_high": params.epsilon_high, "beta": params.beta,
        "scale_rewards": "group", "num_iterations": 1,
    }
