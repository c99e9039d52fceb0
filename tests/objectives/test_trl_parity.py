"""DPO, RPO and KTO against the pinned TRL 1.16.0 loss code, on the same random inputs.

TRL computes these losses inside ``DPOTrainer._compute_loss`` and
``KTOTrainer._compute_loss`` (model forward, loss and metrics in one method). We run
those real methods on a trainer instance that skips ``__init__``: its attributes are
copied from a real ``DPOConfig``/``KTOConfig`` exactly as ``__init__`` copies them,
and the "model" is the toy LM of conftest.py behind TRL's fused-head output type.
Reference log-probabilities go in as TRL's precomputed ``ref_*`` columns.
"""

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

trl = pytest.importorskip("trl")
from trl.trainer.utils import FusedCausalLMOutput  # noqa: E402

from fpa.objectives import OBJECTIVES  # noqa: E402
from fpa.training.batch_statistic import batch_mean, with_batch_mean  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")
P = 3  # pairs; TRL's DPO batch is [chosen rows; rejected rows]
CHOSEN, REJECTED = torch.arange(P), torch.arange(P, 2 * P)
TOLERANCE = 1e-6
CONFIG = dict(output_dir="unused-trl-output", bf16=False, use_cpu=True, report_to="none",
              precompute_ref_log_probs=True)


def fused_model(lm):
    """TRL's ``model(..., labels=, fused_lm_head=True)`` for the toy LM: logits h_θ[:, t] predict input_ids[:, t+1]."""
    def forward(input_ids, labels, fused_lm_head, **_):
        assert fused_lm_head
        target = labels[:, 1:]
        mask = target != -100
        log_probs = lm.token_logp(lm.h_theta, target.clamp(min=0)).masked_fill(~mask, 0.0)
        logits = lm.h_theta.detach()
        entropy = -(torch.softmax(logits, -1) * torch.log_softmax(logits, -1)).sum(-1)
        return FusedCausalLMOutput(log_probs=log_probs, entropy=entropy, mean_logits=logits.mean(-1),
                                   is_top1=(logits.argmax(-1) == target) & mask, label_mask=mask)
    return forward


def model_inputs(lm):
    """One prompt token, then the toy completion (right-padded)."""
    batch = len(lm.reward)
    input_ids = torch.cat([torch.zeros(batch, 1, dtype=torch.long), lm.tokens], dim=1)
    completion_mask = torch.cat([torch.zeros(batch, 1), lm.mask], dim=1).long()
    attention_mask = torch.cat([torch.ones(batch, 1), lm.mask], dim=1).long()
    return {"input_ids": input_ids, "attention_mask": attention_mask, "completion_mask": completion_mask}


def trainer_shell(trainer_type, lm, **attributes):
    trainer = object.__new__(trainer_type)
    trainer.__dict__.update(
        model=SimpleNamespace(training=True), aux_loss_enabled=False, _total_train_tokens=0, _tp_size=1,
        _metrics={"train": defaultdict(list), "eval": defaultdict(list)},
        accelerator=SimpleNamespace(device=torch.device("cpu"), gather=lambda x: x, gather_for_metrics=lambda x: x),
        **attributes,
    )
    return trainer


def trl_dpo_loss(lm, ref_logp, loss_type, loss_weights):
    args = trl.DPOConfig(beta=0.1, loss_type=loss_type, loss_weights=loss_weights, **CONFIG)
    trainer = trainer_shell(  # the attributes DPOTrainer.__init__ copies from args
        trl.DPOTrainer, lm, args=args, beta=args.beta, precompute_ref_logps=args.precompute_ref_log_probs,
        loss_types=args.loss_type, loss_weights=args.loss_weights or [1.0] * len(args.loss_type),
        ld_alpha=args.ld_alpha, f_divergence_type=args.f_divergence_type,
        f_alpha_divergence_coef=args.f_alpha_divergence_coef, label_smoothing=args.label_smoothing,
        use_weighting=args.use_weighting,
    )
    inputs = {**model_inputs(lm), "ref_chosen_logps": ref_logp[:P], "ref_rejected_logps": ref_logp[P:]}
    return trainer._compute_loss(fused_model(lm), inputs, return_outputs=False)


def pair_lm(tiny, lengths=None):
    return tiny((1.0,) * P + (-1.0,) * P, tuple(range(P)) * 2, seed=21, lengths=lengths)


def assert_same_loss_and_gradient(lm, ours, theirs):
    torch.testing.assert_close(ours, theirs, rtol=TOLERANCE, atol=TOLERANCE)
    assert lm.relative_error(lm.grad(ours), lm.grad(theirs)) <= TOLERANCE


def test_dpo_matches_trl_sigmoid(tiny):
    lm = pair_lm(tiny)
    stats = lm.stats(pairs=(CHOSEN, REJECTED))
    ours = OBJECTIVES["dpo"].loss(stats, OBJECTIVES["dpo"].params_type())[0]
    assert_same_loss_and_gradient(lm, ours, trl_dpo_loss(lm, stats.ref_logp, ["sigmoid"], None))


def test_rpo_matches_trl_when_chosen_lengths_are_equal(tiny):
    lm = pair_lm(tiny, lengths=(5, 5, 5, 2, 7, 4))
    stats = lm.stats(pairs=(CHOSEN, REJECTED))
    ours = OBJECTIVES["rpo"].loss(stats, OBJECTIVES["rpo"].params_type(alpha=0.7))[0]
    assert_same_loss_and_gradient(lm, ours, trl_dpo_loss(lm, stats.ref_logp, ["sigmoid", "sft"], [1.0, 0.7]))


def test_rpo_differs_from_trl_with_unequal_chosen_lengths(tiny):
    lm = pair_lm(tiny, lengths=(1, 4, 7, 2, 7, 4))
    stats = lm.stats(pairs=(CHOSEN, REJECTED))
    dpo = OBJECTIVES["dpo"].loss(stats, OBJECTIVES["dpo"].params_type())[0]
    ours = OBJECTIVES["rpo"].loss(stats, OBJECTIVES["rpo"].params_type())[0]
    theirs = trl_dpo_loss(lm, stats.ref_logp, ["sigmoid", "sft"], [1.0, 1.0])
    per_sequence = -(stats.logp[CHOSEN] / stats.length[CHOSEN]).mean()  # paper: mean of (1/|y_w|)·log π
    pooled = -stats.logp[CHOSEN].sum() / stats.length[CHOSEN].sum()  # TRL: mean over all chosen tokens
    torch.testing.assert_close(ours, dpo + per_sequence, rtol=1e-12, atol=0)
    torch.testing.assert_close(theirs, dpo + pooled, rtol=TOLERANCE, atol=TOLERANCE)
    assert abs(ours.item() - theirs.item()) > 1e-2


def trl_kto_loss(lm, ref_logp, beta, lam_w, lam_l):
    args = trl.KTOConfig(beta=beta, desirable_weight=lam_w, undesirable_weight=lam_l, **CONFIG)
    trainer = trainer_shell(  # the attributes KTOTrainer.__init__ copies from args
        trl.KTOTrainer, lm, args=args, beta=args.beta, precompute_ref_logps=args.precompute_ref_log_probs,
        loss_type=args.loss_type, desirable_weight=args.desirable_weight,
        undesirable_weight=args.undesirable_weight, calculate_KL=True,
    )
    inputs = model_inputs(lm)
    # The KL completions are the samples themselves, so TRL's z0 is the batch mean of r_θ as ours.
    kl_inputs = {f"KL_{key}": value for key, value in inputs.items()}
    inputs = {**inputs, **kl_inputs, "label": lm.reward > 0, "ref_logps": ref_logp, "ref_KL_logps": ref_logp}
    return trainer._compute_loss(fused_model(lm), inputs, return_outputs=False)


def test_kto_matches_trl_where_its_reference_point_is_ours(lm5):
    """One micro-batch on one rank, its mean r_θ > 0: TRL's z0 (the batch's mean r_θ on the KL
    completions, here the samples themselves, clamped at 0) is then the paper's. Elsewhere they part:
    TRL's z0 is per micro-batch and never below 0, ours the optimizer batch's mean (test_kto.py)."""
    noise = torch.randn(5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ref_logp = lm5.logp(lm5.h_theta).detach() - 1.5 + 0.3 * noise
    stats = lm5.stats(ref_logp=ref_logp)
    params = OBJECTIVES["kto"].params_type(lam_w=1.3, lam_l=0.7)
    stats = with_batch_mean(stats, batch_mean(OBJECTIVES["kto"], params, [stats], reduce_sum=lambda total: total))
    assert stats.batch_mean.item() > 0
    ours = OBJECTIVES["kto"].loss(stats, params)[0]
    assert_same_loss_and_gradient(lm5, ours, trl_kto_loss(lm5, ref_logp, params.beta, 1.3, 0.7))
