"""SFT/RFT: token-mean NLL of the correct samples."""

import pytest
import torch

from fpa.objectives import OBJECTIVES


def test_token_mean_nll(tiny):
    lm = tiny((1.0, 1.0, 1.0), (0, 1, 1), seed=9, lengths=(2, 7, 4))
    objective = OBJECTIVES["sft"]
    assert objective.sample_filter == "correct"
    loss, _ = objective.loss(lm.stats(), objective.params_type())
    per_token = lm.token_logp(lm.h_theta, lm.tokens)[lm.mask.bool()]  # the 13 completion tokens
    torch.testing.assert_close(loss, -per_token.mean(), rtol=1e-12, atol=0)
    torch.testing.assert_close(lm.grad(loss), lm.grad(-per_token.mean()), rtol=1e-12, atol=1e-15)


def test_rejects_incorrect_samples(lm5):
    with pytest.raises(ValueError, match="sample_filter"):
        OBJECTIVES["sft"].loss(lm5.stats(), OBJECTIVES["sft"].params_type())
