"""The future-policy KL against naive full-vocabulary computations from the models' own logits."""

from __future__ import annotations

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from fpa.analysis.future_policy import HeadInputs, future_policy_kl, measure
from fpa.decoder.batch import collate, completion_states
from fpa.samples.tokenize import encode_sample
from fpa.toy.tokenizer import build_tokenizer

TOKENIZER = build_tokenizer()


def tiny_model(seed: int, tie: bool):
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(TOKENIZER), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, tie_word_embeddings=tie)
    return Qwen2ForCausalLM(config).double().eval()


def encoded_samples():
    texts = [("Q: 3+4-2\nA:", " 3+4=7. 7-2=5. The final answer is \\boxed{5}"),
             ("Q: 9-1\nA:", " 9-1=8. The final answer is \\boxed{8}"),
             ("Q: 1+1+1+1\nA:", " 1+1=2. 2+1=3. 3+1=5. The final answer is \\boxed{5}")]
    return [encode_sample(TOKENIZER, prompt, completion, 256) for prompt, completion in texts]


def naive_logits(model, encoded):
    """The model's own full logits at the completion-predicting positions: [N, V]."""
    batch = collate(encoded, pad_id=0)
    with torch.no_grad():
        logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    return completion_states(logits, batch)


@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
def test_lambda_zero_is_the_naive_kl_from_the_actual_to_the_anchor(tie):
    target, anchor, reference = tiny_model(1, tie), tiny_model(2, tie), tiny_model(3, tie)
    encoded = encoded_samples()
    result = measure(target, anchor, reference, encoded, [0.0, 1.0], batch_size=2, chunk_size=7)
    log_p = naive_logits(target, encoded).log_softmax(-1)
    log_q = naive_logits(anchor, encoded).log_softmax(-1)
    naive = (log_p.exp() * (log_p - log_q)).sum(-1)
    assert result["tokens"] == naive.shape[0] == sum(e.completion_len for e in encoded)
    torch.testing.assert_close(torch.tensor(result["kl_per_token"][0], dtype=torch.float64), naive.mean(),
                               rtol=1e-10, atol=1e-12)
    assert result["kl_per_sequence"][0] == pytest.approx(float(naive.sum()) / len(encoded), rel=1e-10)


def test_extrapolation_matches_full_logits_of_the_three_models():
    target, anchor, reference = tiny_model(1, False), tiny_model(2, False), tiny_model(3, False)
    encoded = encoded_samples()
    lams = [0.5, 2.0]
    result = measure(target, anchor, reference, encoded, lams, batch_size=3, chunk_size=5)
    log_p = naive_logits(target, encoded).log_softmax(-1)
    h_anchor, h_ref = naive_logits(anchor, encoded), naive_logits(reference, encoded)
    for i, lam in enumerate(lams):
        log_hat = ((1 + lam) * h_anchor - lam * h_ref).log_softmax(-1)
        naive = (log_p.exp() * (log_p - log_hat)).sum(-1).mean()
        assert result["kl_per_token"][i] == pytest.approx(float(naive), rel=1e-10)


def test_kl_is_zero_where_the_target_is_the_extrapolation():
    """A target whose logits are exactly (1+λ)h_a − λh_ref has KL 0 at that λ and only there."""
    torch.manual_seed(0)
    n, d, v, lam = 11, 4, 9, 1.5
    anchor = HeadInputs(torch.randn(n, d, dtype=torch.float64), torch.randn(v, d, dtype=torch.float64))
    reference = HeadInputs(torch.randn(n, d, dtype=torch.float64), torch.randn(v, d, dtype=torch.float64))
    # stack the two heads so that z_t·W_tᵀ = (1+λ)·z_a·W_aᵀ − λ·z_r·W_rᵀ
    target = HeadInputs(torch.cat([(1 + lam) * anchor.hidden, -lam * reference.hidden], 1),
                        torch.cat([anchor.weight, reference.weight], 1))
    kl = future_policy_kl(target, anchor, reference, [0.0, lam, 3.0], chunk_size=4)
    assert kl.shape == (3, n)
    assert torch.allclose(kl[1], torch.zeros(n, dtype=torch.float64), atol=1e-12)
    assert (kl[0] > 1e-6).all() and (kl[2] > 1e-6).all()


def test_bad_shapes_and_lambdas_are_named():
    h, w = torch.zeros(3, 4), torch.zeros(5, 4)
    good = HeadInputs(h, w)
    with pytest.raises(ValueError, match="anchor.hidden"):
        future_policy_kl(good, HeadInputs(torch.zeros(2, 4), w), good, [0.0])
    with pytest.raises(ValueError, match="reference.weight"):
        future_policy_kl(good, good, HeadInputs(h, torch.zeros(5, 3)), [0.0])
    with pytest.raises(ValueError, match="lams"):
        future_policy_kl(good, good, good, [-1.0])
