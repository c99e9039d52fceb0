"""At step 0 (θ = ref) FPA's weight is Off-RL's: λ·(h_θ − h_ref) must be zero, not precision noise.

Under bf16 autocast the policy's hidden states and a reference computed another way (an fp32
forward, or the bf16-rounded cache against the fp32 policy) differ by rounding, which FPA
multiplies by λ (up to 20 in the paper's sweep). The reference here goes through the real cache
writer and reader, the policy through the trainer's ``Policy`` forward and chunked head.
"""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from fpa.decoder.batch import collate, completion_states
from fpa.reference.cache import ReferenceCache, write_reference_cache
from fpa.samples.tokenize import encode_record
from fpa.training.head import token_statistics
from fpa.training.parallel import Policy

LAMBDA = 20.0
# |log w_FPA − log w_OffRL| per sequence at step 0; the defects put back give 1e-2 and more
TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def sharp_model_dir(tmp_path_factory, tiny_model_dir, tiny_tokenizer):
    """The tiny Qwen2 with a real model's logit scale (a head 10x its init: logits of a few units)."""
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32)
    with torch.no_grad():
        model.get_output_embeddings().weight.mul_(10.0)
    path = tmp_path_factory.mktemp("sharp")
    model.save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return path


def _step_zero_log_weights(model_dir, samples, cache_dir, precision: str, head_precision: str = "fp32",
                           fsdp: bool = False):
    """(log w_FPA, log w_OffRL) per sample: mean over its tokens of log π̂_λ and of log π_θ; ``fsdp``: the
    policy under FSDP2 (one in-process rank) with the default mixed precision (bf16 gathers)."""
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    lm = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    cache = ReferenceCache(cache_dir)
    batch = collate([encode_record(tokenizer, s, 64) for s in samples], tokenizer.pad_token_id)
    ref = cache.batch(range(len(samples)))

    def statistics(hidden, weight):
        return token_statistics(completion_states(hidden, batch), weight, batch.targets, ref_hidden=ref.hidden,
                                ref_weight=cache.head_weight(), ref_logsumexp=ref.ref_lse, lam=LAMBDA,
                                chunk_size=16, head_precision=head_precision)

    policy = Policy(lm, torch.bfloat16 if precision == "bf16" else None)
    if fsdp:
        from fpa.training.parallel import FullyShardedDataParallel
        from fpa.training.session import TrainConfig

        cfg = TrainConfig(precision=precision, parallel="fsdp")
        policy, _ = FullyShardedDataParallel(None, cfg).prepare(policy, lambda weights: None)
    with torch.no_grad():
        stats = policy(batch.input_ids, batch.attention_mask, statistics)
    rows = torch.repeat_interleave(torch.arange(len(samples)), batch.lengths)
    per_sample = [torch.zeros(len(samples)).index_add(0, rows, t) / batch.lengths for t in (stats.hat_logp, stats.logp)]
    return per_sample


@pytest.mark.parametrize("head_precision", ["fp32", "tf32", "bf16"])
def test_fpa_weights_equal_off_rl_weights_at_step_zero_under_bf16(tmp_path, sharp_model_dir, tiny_samples,
                                                                 head_precision):
    tokenizer = AutoTokenizer.from_pretrained(sharp_model_dir)
    # the cache's batches (2 samples) are padded otherwise than the training batch (all 5)
    write_reference_cache(sharp_model_dir, tiny_samples, tokenizer, tmp_path / "cache", max_length=64,
                          dtype="bfloat16", precision="bf16", batch_size=2)
    fpa, off_rl = _step_zero_log_weights(sharp_model_dir, tiny_samples, tmp_path / "cache", "bf16", head_precision)
    assert (fpa - off_rl).abs().max() < TOLERANCE, (fpa - off_rl)


def test_a_reference_computed_off_the_policys_precision_path_is_lambda_times_noise(tmp_path, sharp_model_dir,
                                                                                 tiny_samples):
    """The check above can fail: a cache computed in fp32 for a bf16 policy (the defect) is far off."""
    tokenizer = AutoTokenizer.from_pretrained(sharp_model_dir)
    write_reference_cache(sharp_model_dir, tiny_samples, tokenizer, tmp_path / "cache", max_length=64,
                          dtype="bfloat16", precision="fp32", batch_size=2)
    fpa, off_rl = _step_zero_log_weights(sharp_model_dir, tiny_samples, tmp_path / "cache", "bf16")
    assert (fpa - off_rl).abs().max() > 10 * TOLERANCE


def test_fpa_weights_equal_off_rl_weights_at_step_zero_under_fsdp_bf16_gathers(tmp_path, sharp_model_dir,
                                                                              tiny_samples):
    """FSDP computes with bf16 weights (its default mixed precision under bf16): the cache, loaded in the
    training's compute dtype (``compute_weights_dtype``), computes alike."""
    from fpa.memory.training import compute_weights_dtype

    weights_dtype = compute_weights_dtype({"precision": "bf16", "parallel": "fsdp"})
    assert weights_dtype == "bfloat16"
    tokenizer = AutoTokenizer.from_pretrained(sharp_model_dir)
    write_reference_cache(sharp_model_dir, tiny_samples, tokenizer, tmp_path / "cache", max_length=64,
                          dtype="bfloat16", precision="bf16", batch_size=3, weights_dtype=weights_dtype)
    fpa, off_rl = _step_zero_log_weights(sharp_model_dir, tiny_samples, tmp_path / "cache", "bf16", fsdp=True)
    assert (fpa - off_rl).abs().max() < TOLERANCE, (fpa - off_rl)
