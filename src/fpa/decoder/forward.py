"""The body's forward at ``training.precision`` (its autocast dtype: ``fpa.precision.autocast_dtype``), one
path for the policy, the online reference and the cache.

``bf16`` runs the decoder under bf16 autocast over fp32 weights, ``fp32`` runs it in fp32. The
reference's hidden states (cached by ``cache_reference`` or computed online) go through the very same
path as the policy's (``decoder_hidden``), as the peers compute their reference: TRL's
``precompute_ref_log_probs`` and its reference model run in the policy's dtype and autocast, verl's
reference worker and OpenRLHF's reference model in the actor's bf16. So at step 0, θ = ref, the policy's
hidden states equal the reference's (up to the kernels' order of summation over differently padded
batches), and FPA's λ·(h_θ − h_ref) starts at zero instead of at λ times the gap between a bf16 and an
fp32 forward.
"""

from __future__ import annotations

import torch
from torch import Tensor


def decoder_hidden(lm, input_ids: Tensor, attention_mask: Tensor | None, autocast: torch.dtype | None,
                   position_ids: Tensor | None = None, sequence_lengths: tuple[int, ...] | None = None) -> Tensor:
    """The decoder's final (post-norm) hidden states [B, L, d] in fp32, under ``autocast`` if given; a packed
    row passes its ``position_ids`` and ``sequence_lengths`` (``fpa.decoder.packing``)."""
    packed = {} if sequence_lengths is None else {"position_ids": position_ids, "sequence_lengths": sequence_lengths}
    with torch.autocast(input_ids.device.type, dtype=autocast, enabled=autocast is not None):
        hidden = lm.get_decoder()(input_ids=input_ids, attention_mask=attention_mask, **packed).last_hidden_state
    return hidden.float()
