"""The policy body at the device's speed: the optimizer's kernel, which layers keep their activations,
compiled decoder layers, padding or packing and the attention mask, and bit-exact determinism
(``training.*`` keys).

What the strongest peers do, and where this differs:

- compute precision: under ``parallel: fsdp`` FSDP2's ``MixedPrecisionPolicy`` gathers bf16 weights
  for compute over fp32 shards that AdamW updates (``fpa.training.parallel``), as torchtitan and
  verl do. Under DDP (one process included) the decoder runs under bf16 autocast over fp32 weights,
  as torchtitan's ``maybe_enable_amp`` does whenever FSDP is off; TRL instead loads the model in
  bf16 (no fp32 master weights), which changes AdamW's updates, so it is not followed here.
- ``adamw: auto``: torch's fused AdamW on CUDA (torchtitan's default ``implementation: fused``,
  TRL's ``adamw_torch_fused``), torch's own choice elsewhere (a per-parameter loop on CPU, as before).
- ``checkpoint_every_layers: k``: with ``gradient_checkpointing`` on, only every k-th decoder layer
  recomputes its activations (torchtitan's selective ``selective_ac_option: "k"``; Transformers'
  ``every_n_layers``); torchtitan's op-level option (save matmul outputs) is not offered.
- ``compile_layers``: each decoder layer ``torch.compile``d on its own (torchtitan's per-block
  regional compile), before FSDP wraps it; the embedding, head and loss stay eager.
- ``attention: causal``: right-padded batches pass no attention mask. Every real token precedes its
  row's padding, so a causal mask alone hides the padding from it: the real positions' hidden
  states are the masked path's, and without a mask SDPA keeps its flash kernel and grouped K/V
  (Transformers' ``use_gqa_in_sdpa``) instead of the math kernel over repeated K/V.
- ``attention: packed`` (the default): no padding at all, the micro-batch's sequences end to end in one
  row with restarting positions and SDPA per sequence (``fpa.decoder.packing``, which says why that
  kernel): the body computes the real tokens only. TRL's ``padding_free`` packs alike but needs
  flash-attention's varlen kernels (a GPU and a package); torchtitan's document masks take FlexAttention.
- ``deterministic``: torch's deterministic algorithms, cuBLAS's fixed workspace, cuDNN's
  deterministic kernels and exact fp32 matmuls outside the loss head (which sets its own), so that
  a resumed CUDA run is bit-identical to a straight one.
"""

from __future__ import annotations

import os

import torch

from fpa.decoder.packing import use_packed_attention

ATTENTION = ("masked", "causal", "packed")
ADAMW = ("auto", "default", "fused")
#: cuBLAS's deterministic workspace (CUDA docs, "Results reproducibility"): read at its first handle
CUBLAS_WORKSPACE = ":4096:8"


def fused_adamw(adamw: str, device: torch.device) -> bool | None:
    """The ``fused`` argument of ``torch.optim.AdamW`` for ``training.adamw`` on ``device`` (None: torch's choice)."""
    if adamw not in ADAMW:
        raise ValueError(f"training.adamw: expected one of {list(ADAMW)}, got {adamw!r}")
    if adamw == "fused" or (adamw == "auto" and torch.device(device).type == "cuda"):
        return True
    return None


def prepare_layers(lm, cfg) -> None:
    """The packed attention (``attention: packed``), activation checkpointing of every
    ``checkpoint_every_layers``-th layer and compiled decoder layers, in place, before data parallel wraps
    the model."""
    if cfg.checkpoint_every_layers < 1:
        raise ValueError(f"training.checkpoint_every_layers: expected an integer >= 1, got "
                         f"{cfg.checkpoint_every_layers!r}")
    if is_packed(cfg.attention):
        use_packed_attention(lm)
    if cfg.gradient_checkpointing:
        lm.gradient_checkpointing_enable(every_n_layers=cfg.checkpoint_every_layers)
    if cfg.compile_layers:
        for layer in lm.get_decoder().layers:
            layer.compile()


def is_packed(attention: str) -> bool:
    """Whether ``training.attention`` packs the micro-batches (else it pads them)."""
    if attention not in ATTENTION:
        raise ValueError(f"training.attention: expected one of {list(ATTENTION)}, got {attention!r}")
    return attention == "packed"


def attention_mask_for(attention: str, attention_mask: torch.Tensor) -> torch.Tensor | None:
    """The mask the decoder gets: a right-padded batch's padding mask (``masked``), or None (``causal``,
    and ``packed``, whose sequences have no padding)."""
    is_packed(attention)
    return attention_mask if attention == "masked" else None


def make_deterministic(environ=os.environ) -> None:
    """Bit-exact kernels for the rest of this process (``training.deterministic``); call it before CUDA's
    first matmul: cuBLAS reads its workspace setting once."""
    environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.fp32_precision = "ieee"
    torch.backends.cudnn.conv.fp32_precision = "ieee"
