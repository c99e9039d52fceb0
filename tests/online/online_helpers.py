"""An ``OnlineTrainer`` on the tiny model, as ``fpa.training.online.run`` builds one."""

from __future__ import annotations

import torch

from fpa.online import get_online_method
from fpa.training.online.settings import trl_settings

TRAINING = {"lr": 1e-3, "warmup_steps": 0, "max_grad_norm": 1.0, "weight_decay": 0.0, "adam_betas": [0.9, 0.999],
            "precision": "fp32", "gradient_checkpointing": False, "adamw": "default"}
SMALL = {"rollout_steps": 1, "batch_prompts": 4, "mini_batch_prompts": 4, "micro_batch": 16, "num_generations": 4,
         "max_new_tokens": 8}


def make_trainer(model_dir, out_dir, method: str, rows: list[dict], reward, dtype=torch.float32, **params):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from fpa.training.online.trainer import OnlineTrainer

    hyper = get_online_method(method).parse_params({**SMALL, **params}, "params")
    config = GRPOConfig(output_dir=str(out_dir), use_cpu=True, report_to="none", logging_steps=1, seed=0,
                        remove_unused_columns=False, disable_tqdm=True,
                        **trl_settings(hyper, TRAINING, processes=1))
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
    trainer = OnlineTrainer(model=model, args=config, train_dataset=Dataset.from_list(rows),
                            processing_class=AutoTokenizer.from_pretrained(model_dir), reward_funcs=[reward],
                            dynamic_sampling_rounds=hyper.dynamic_sampling_rounds)
    trainer.model.train()
    trainer.current_gradient_accumulation_steps = config.gradient_accumulation_steps
    return trainer, hyper
