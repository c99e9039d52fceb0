"""The frozen reference model's two parts the reference statistics use: its output head W_ref and its
body's final hidden states z_ref (π_ref(·|x, y<t) = softmax(W_ref · z_ref,t))."""

from __future__ import annotations

import torch
from torch import Tensor

from fpa.decoder.batch import Sequences, completion_states
from fpa.decoder.forward import decoder_hidden
from fpa.decoder.packing import decoder_inputs


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
def online_reference_hidden(ref_model, batch: Sequences, autocast: torch.dtype | None = None) -> Tensor:
    """z_ref [N, d] fp32 predicting ``batch``'s completion tokens: the reference body's forward, no head, in the
    training's precision path (``fpa.decoder.forward.decoder_hidden``), padded or packed.

    ``ref_model`` is a causal LM in eval mode (its ``get_decoder()`` body runs).
    """
    hidden = decoder_hidden(ref_model, autocast=autocast, **decoder_inputs(batch, ref_model.device))
    return completion_states(hidden, batch)
