"""The frozen reference model's two parts the reference statistics use: its output head W_ref and its
body's final hidden states z_ref (π_ref(·|x, y<t) = softmax(W_ref · z_ref,t))."""

from __future__ import annotations

import torch
from torch import Tensor

from fpa.training.precision import decoder_hidden


def reference_head_weight(model) -> Tensor:
    """W_ref [V, d] of a causal LM (the tied embedding if tied); refuses heads that are not plain z·Wᵀ."""
    head = model.get_output_embeddings()
    if getattr(head, "bias", None) is not None:
        raise NotImplementedError("output head has a bias: the cache stores only W_ref, so h_ref = z·Wᵀ is wrong")
    for name in ("final_logit_softcapping", "logit_scale"):
        if getattr(model.config, name, None) not in (None, 1.0):
            raise NotImplementedError(f"config.{name} = {getattr(model.config, name)}: logits are not z·Wᵀ")
    return head.weight


@torch.no_grad()
def online_reference_hidden(ref_model, input_ids: Tensor, attention_mask: Tensor | None, predict_mask: Tensor,
                            autocast: torch.dtype | None = None, position_ids: Tensor | None = None,
                            sequence_lengths: tuple[int, ...] | None = None) -> Tensor:
    """z_ref [N, d] fp32 at ``predict_mask`` positions: the reference body's forward, no head, in the
    training's precision path (``fpa.training.precision.decoder_hidden``), padded or packed (a packed row
    gives ``position_ids`` and ``sequence_lengths``, and no mask).

    ``ref_model`` is a causal LM in eval mode (its ``get_decoder()`` body runs).
    """
    return decoder_hidden(ref_model, input_ids, attention_mask, autocast, position_ids, sequence_lengths)[predict_mask]
