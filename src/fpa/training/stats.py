"""Model outputs → ``SequenceStats``, computed once per micro-batch for any objective.

The policy body gives final hidden states; the chunked loss head turns them (and the
reference's hidden states, from the cache or an online forward) into per-token
statistics without materialising full-vocabulary logits; per-sequence sums follow.
"""

from __future__ import annotations

import torch
from torch import Tensor

from fpa.decoder.batch import completion_states
from fpa.objectives.base import Objective, SequenceStats
from fpa.reference.inputs import ReferenceInputs
from fpa.samples.pairs import build_pairs
from fpa.training.batches import Batch
from fpa.training.head import token_statistics


def per_sequence(values: Tensor | None, rows: Tensor, batch_size: int) -> Tensor | None:
    if values is None:
        return None
    return torch.zeros(batch_size, dtype=values.dtype, device=values.device).index_add(0, rows, values)


def sequence_stats(hidden: Tensor, head_weight: Tensor, batch: Batch, objective: Objective, params: object, *,
                   reference: ReferenceInputs | None, pair_seed: int, chunk_size: int,
                   head_precision: str = "fp32", fused_head: bool = False) -> SequenceStats:
    """hidden: [R, L, d] policy final hidden states; ``reference`` at the batch's completion positions;
    ``fused_head``: the head's compiled chunk passes (``training.fused_head``)."""
    ref = reference or ReferenceInputs(None, None, None)
    tokens = token_statistics(
        completion_states(hidden, batch), head_weight, batch.targets,
        ref_hidden=ref.hidden, ref_weight=ref.weight, ref_logsumexp=ref.logsumexp,
        lam=objective.hat_lambda(params), want_kl="fwd_kl" in objective.requires, chunk_size=chunk_size,
        head_precision=head_precision, fused=fused_head,
    )
    size = len(batch.sample_index)
    chosen = rejected = None
    if "pairs" in objective.requires:
        chosen, rejected = build_pairs(batch.reward, batch.group, getattr(params, "pairing"), pair_seed)
    return SequenceStats(
        logp=per_sequence(tokens.logp, batch.sequence, size),
        length=batch.lengths.float(),
        reward=batch.reward,
        group=batch.group,
        ref_logp=ref.sequence_logp if ref.sequence_logp is not None else per_sequence(tokens.ref_logp,
                                                                                      batch.sequence, size),
        hat_logp=per_sequence(tokens.hat_logp, batch.sequence, size),
        fwd_kl=per_sequence(tokens.fwd_kl, batch.sequence, size),
        chosen=chosen,
        rejected=rejected,
    )


DIAGNOSTIC_KEYS = tuple(
    [f"{k}_{c}" for k in ("weight", "logratio", "hat_weight") for c in ("correct", "incorrect")]
    + ["hat_over_pi_incorrect", "hat_weight_below_0.2", "weight_below_0.2"]
)


def diagnostics(stats: SequenceStats) -> dict[str, float]:
    """The quantities the paper plots, per class (correct / incorrect), detached."""
    out: dict[str, float] = {}
    correct = stats.reward > 0
    weight = torch.exp(stats.logp.detach() / stats.length)
    for name, mask in (("correct", correct), ("incorrect", ~correct)):
        if not mask.any():
            continue
        out[f"weight_{name}"] = weight[mask].mean().item()
        if stats.ref_logp is not None:
            out[f"logratio_{name}"] = (stats.logp.detach() - stats.ref_logp)[mask].mean().item()
        if stats.hat_logp is not None:
            hat_weight = torch.exp(stats.hat_logp / stats.length)
            out[f"hat_weight_{name}"] = hat_weight[mask].mean().item()
            if name == "incorrect":
                out["hat_over_pi_incorrect"] = (hat_weight[mask] / weight[mask]).mean().item()
                out["hat_weight_below_0.2"] = int((hat_weight[mask] < 0.2).sum().item())
        if name == "incorrect":
            out["weight_below_0.2"] = int((weight[mask] < 0.2).sum().item())
    return out
