"""Final hidden states of a causal LM at the positions that predict completion tokens.

Both analyses read a model through its body and its output head separately, so the
[N, V] logits are formed a chunk of rows at a time by the caller, never for all rows.
"""

from __future__ import annotations

from typing import Sequence

from torch import Tensor

from fpa.decoder.batch import collate, completion_states
from fpa.samples.tokenize import EncodedSample


def completion_hidden(model, encoded: Sequence[EncodedSample]) -> tuple[Tensor, Tensor, Tensor]:
    """(hidden [N, d], targets [N], lengths [B]) over the completion tokens of ``encoded``.

    Rows are right-padded and masked, so the pad id does not matter (0). ``hidden`` keeps
    the autograd graph when gradients are enabled.
    """
    batch = collate(encoded, pad_id=0)
    out = model.get_decoder()(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
    return completion_states(out.last_hidden_state, batch), batch.targets, batch.lengths
