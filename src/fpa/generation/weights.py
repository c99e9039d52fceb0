"""A checkpoint's weights copied into a model already built and placed: how ``HFBackend`` swaps a
curve's next snapshot into the job's one engine (``fpa.generation.backend.Engine``) instead of
building a model per snapshot. vLLM's workers do the same from the checkpoint's files
(``fpa.generation.vllm``)."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from safetensors.torch import load_file

from fpa.io import read_json


def checkpoint_files(model_dir: str | os.PathLike) -> list[Path]:
    """The safetensors files of an HF-format checkpoint, one file or the shards of its index."""
    model_dir = Path(model_dir)
    index = model_dir / "model.safetensors.index.json"
    if index.is_file():
        return sorted({model_dir / name for name in read_json(index)["weight_map"].values()})
    if (model_dir / "model.safetensors").is_file():
        return [model_dir / "model.safetensors"]
    raise ValueError(f"{model_dir}: expected model.safetensors or model.safetensors.index.json (an HF-format "
                     "checkpoint)")


@torch.no_grad()
def load_checkpoint_weights(model: torch.nn.Module, model_dir: str | os.PathLike) -> None:
    """Copy ``model_dir``'s tensors into ``model``'s parameters, in place: each keeps its device and
    dtype (a float32 snapshot into a bfloat16 model is cast, as ``from_pretrained(dtype=...)`` casts).

    Every parameter must be in the checkpoint (a tied copy, which ``save_pretrained`` leaves out, is
    set through the parameter it shares) and every tensor of the checkpoint must be the model's.
    """
    state: dict[str, torch.Tensor] = {}
    for path in checkpoint_files(model_dir):
        state.update(load_file(str(path)))
    expected = model.state_dict()
    unknown = sorted(name for name, tensor in state.items()
                     if name not in expected or expected[name].shape != tensor.shape)
    lacking = sorted({name for name, _ in model.named_parameters()} - state.keys())
    if unknown or lacking:
        raise ValueError(f"{model_dir}: not a checkpoint of the loaded model's architecture: tensors of another "
                         f"name or shape {unknown[:3]}, parameters missing {lacking[:3]}")
    model.load_state_dict(state, strict=False)
