"""The context length a generation job gives vLLM (``max_model_len``): what the job needs, the
longest of its prompts in tokens plus ``max_new_tokens``, not the model's own maximum (131,072 for
Llama 3.2), to which vLLM otherwise sizes its scheduler and checks the KV cache memory."""

from __future__ import annotations

import os
from typing import Sequence


def job_max_model_len(generation: dict, model_dir: str | os.PathLike, prompts: Sequence[str]) -> int | None:
    """``generation.max_model_len`` when the config sets it, else the longest of ``prompts`` (tokenised
    as the vLLM backend sends them: no special tokens added) plus ``generation.max_new_tokens``; None
    for a backend other than vLLM (``HFBackend`` sizes its cache to each batch)."""
    if generation["backend"] != "vllm":
        return None
    if generation.get("max_model_len") is not None:
        return generation["max_model_len"]
    if not prompts:
        raise ValueError("max_model_len: the job has no prompts to size it from")
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    lengths = tokenizer(list(dict.fromkeys(prompts)), add_special_tokens=False)["input_ids"]
    return max(map(len, lengths)) + generation["max_new_tokens"]
