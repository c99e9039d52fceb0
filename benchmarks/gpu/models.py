"""The shapes the GPU benchmark runs at, random models of them built on the device, and their data.

Full: the architectures of config/paper.yaml's ``models:`` (config.json's shapes at the pinned
revision) and its ``training:`` (max_length 2560, one problem of K = 8 samples per micro-batch).
Tiny (``--tiny``): the same code on CPU with a 2-layer model, V = 512 and 64-token sequences.
Weights are random (no hub): built under ``torch.device(device)`` in the dtype asked, so a 4B
model takes seconds on a GPU instead of minutes of CPU initialisation.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

import torch
import yaml

from fpa.memory.architecture import Architecture
from gpu.budget import free_device_memory
from shared.harness import ascii_text

ROOT = Path(__file__).resolve().parents[2]
PAPER = ROOT / "config" / "paper.yaml"
#: "We conduct all training on a single node with two NVIDIA H200 GPUs" (the paper's training details)
PAPER_GPUS = 2
TINY_ARCHITECTURE = Architecture(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2, head_dim=16, tie_word_embeddings=True,
                                 qk_norm=True)


@dataclass(frozen=True)
class Shape:
    """One model and the paper's micro-batch: ``sequences`` of ``max_length`` tokens, ``prompt`` of them prompt."""

    name: str
    model_type: str
    architecture: Architecture
    sequences: int
    max_length: int
    prompt: int
    training: dict

    @property
    def completion_tokens(self) -> int:
        return self.sequences * (self.max_length - self.prompt)

    def hf_config(self):
        from transformers import AutoConfig

        fields = {k: v for k, v in self.architecture.to_hf().items() if k not in ("qk_norm",)}
        return AutoConfig.for_model(self.model_type, **fields, max_position_embeddings=max(4096, self.max_length))

    def with_layers(self, layers: int) -> "Shape":
        """The same widths at another depth (the checks that need the real V and d, not 36 layers)."""
        return replace(self, name=f"{self.name} ({layers} layers)",
                       architecture=replace(self.architecture, num_hidden_layers=layers))


def paper_config() -> dict:
    return yaml.safe_load(PAPER.read_text())


def paper_overhead(model: str = "qwen3-4b-base") -> dict:
    """{run: (examples/s, peak "GB")} of the paper's overhead table, as config/paper_results.yaml prints them."""
    rows = yaml.safe_load((ROOT / "config" / "paper_results.yaml").read_text())["overhead"]["models"][model]
    return {run: tuple(float(x) for x in cells.split()) for run, cells in rows.items()}


def shape(model: str, tiny: bool) -> Shape:
    """``model`` of config/paper.yaml at the paper's sequence length and micro-batch (tiny: the tiny stand-in)."""
    config = paper_config()
    entry, training = config["models"][model], config["training"]
    where = f"{PAPER.name}: models.{model}.architecture"
    architecture = Architecture.from_hf(entry["architecture"], where)
    sequences = training["micro_batch_problems"] * config["dataset"]["k"]
    if tiny:
        return Shape(f"{model} (tiny stand-in)", "qwen3", TINY_ARCHITECTURE, 2, 64, 16, training)
    return Shape(model, entry["architecture"]["model_type"], architecture, sequences, training["max_length"], 256,
                 training)


def build_model(shape: Shape, device, dtype: torch.dtype, seed: int = 0):
    """A randomly initialised causal LM of ``shape``, its weights created on ``device`` in ``dtype``."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    default = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            return AutoModelForCausalLM.from_config(shape.hf_config(), dtype=dtype)
    finally:
        torch.set_default_dtype(default)


def write_model_dir(shape: Shape, directory: Path, device) -> Path:
    """A random model of ``shape`` saved as an HF directory (bf16 on disk) with the toy tokenizer, which
    the project's trainer and cache writer load as they load a hub checkpoint."""
    from fpa.toy.tokenizer import save_tokenizer

    model = build_model(shape, device, torch.bfloat16)
    model.save_pretrained(directory)
    del model
    free_device_memory()
    tokenizer = save_tokenizer(directory)
    tokenizer.model_max_length = shape.max_length
    tokenizer.save_pretrained(directory)
    return directory


def sample(problem: int, k: int, prompt: str, completion: str) -> dict:
    """Sample ``k`` of problem ``problem``: even ones correct (reward 1), odd ones not (reward -1)."""
    return {"id": f"p{problem}-{k}", "problem_id": f"p{problem}", "prompt": prompt, "completion": completion,
            "reward": 1.0 if k % 2 == 0 else -1.0, "correct": k % 2 == 0}


def problem_samples(shape: Shape, problems: int, seed: int = 0, max_length: int | None = None) -> list[dict]:
    """``problems`` groups of ``shape.sequences`` samples, each exactly ``max_length`` tokens with eos,
    half of each group correct (reward 1), half not (reward -1)."""
    rng = random.Random(seed)
    length = max_length or shape.max_length
    prompt = min(shape.prompt, length // 4)
    samples = []
    for p in range(problems):
        text = ascii_text(rng, prompt)
        samples += [sample(p, k, text, ascii_text(rng, length - prompt - 1)) for k in range(shape.sequences)]
    return samples
