"""The body's speed paths (``fpa.training.body``) against today's path on CPU: the same losses and
gradients of one training micro-batch, on a tiny Qwen3 with grouped K/V (4 query heads, 2 K/V heads)
and a right-padded batch of unequal lengths.

Tolerances: selective checkpointing recomputes the very same CPU kernels, so it is bit-identical;
the unmasked (causal) attention, the compiled layers and the fused head take other kernels (SDPA
without a mask, Inductor's fused code) whose fp32 sums round differently: per-sequence log-probs within 1e-6
relative, the loss within 1e-6 of the largest per-sequence weight, every gradient entry within 1e-5
of the largest gradient entry (measured here: 0 and 7e-8 relative for the log-probs, 6e-7 and
1.2e-6 for the gradients). ``deterministic`` on CPU changes no kernel: bit-identical.
"""

from __future__ import annotations

import pytest
import torch

from fpa.training import batches as B
from fpa.training import body as speed
from fpa.training import loop
from fpa.training.session import Session, TrainConfig, open_session
from fpa.training.head_chunk import compiled_chunk

# today's path: right-padded batches with their padding mask
TRAINING = {"lr": 1e-3, "warmup_steps": 1, "epochs": 1, "batch_problems": 2, "micro_batch_problems": 2,
            "max_length": 128, "chunk_size": 32, "attention": "masked"}


def _loss_and_gradients(model_dir, data, **overrides) -> tuple[torch.Tensor, dict[str, torch.Tensor], Session]:
    """Off-RL's per-sequence log-probs and the gradients of its loss, on the first micro-batch of step 0,
    trained as ``overrides`` say."""
    cfg = TrainConfig.from_dict({**TRAINING, **overrides})
    run, _ = open_session(str(model_dir), str(data / "train.jsonl"), str(data / "val.jsonl"), None, "offrl",
                          {}, cfg, seed=3)
    run.body.train()
    micro = B.micro_batches(B.global_batch(run.train.groups, 0, batch_problems=2, seed=3), 2)[0]
    stats, _ = loop._forward_stats(run, micro, run.train, run.body)
    loss, _ = run.objective.loss(stats, run.hyper)
    loss.backward()
    grads = {name: param.grad.detach().clone() for name, param in run.body.named_parameters()}
    weights = torch.exp(stats.logp.detach() / stats.length)  # Off-RL's per-sequence π^(1/|y|)
    return {"logp": stats.logp.detach(), "loss": loss.detach(), "weight": weights.abs().max()}, grads, run


@pytest.fixture(scope="module")
def todays(gqa_model_dir, tiny_dataset):
    values, grads, run = _loss_and_gradients(gqa_model_dir, tiny_dataset)
    batch = B.collate(B.micro_batches(B.global_batch(run.train.groups, 0, batch_problems=2, seed=3), 2)[0],
                      run.train.encoded, run.train.samples, run.tokenizer.pad_token_id)
    assert (batch.attention_mask == 0).any(), "the test batch must be padded"
    return values, grads


def _assert_same(todays, other, rtol, atol):
    """Per-sequence log-probs within ``rtol``; the loss within ``rtol`` times the largest per-sequence
    weight π^(1/|y|) (the loss is a mean of ±weights that nearly cancel, so relative to the loss itself
    means nothing); every gradient entry within ``atol`` times the largest gradient entry of today's path."""
    values, grads = todays
    torch.testing.assert_close(other[0]["logp"], values["logp"], rtol=rtol, atol=0)
    assert abs(float(other[0]["loss"] - values["loss"])) <= rtol * float(values["weight"])
    assert other[1].keys() == grads.keys()
    scale = max(float(g.abs().max()) for g in grads.values())
    for name in grads:
        torch.testing.assert_close(other[1][name], grads[name], rtol=0, atol=atol * scale, msg=name)


def test_causal_attention_without_the_mask_gives_the_masked_losses_and_gradients(gqa_model_dir, tiny_dataset,
                                                                                 todays):
    values, grads, _ = _loss_and_gradients(gqa_model_dir, tiny_dataset, attention="causal")
    _assert_same(todays, (values, grads), rtol=1e-6, atol=1e-5)


def test_selective_checkpointing_recomputes_every_kth_layer_bit_identically(gqa_model_dir, tiny_dataset, todays):
    values, grads, run = _loss_and_gradients(gqa_model_dir, tiny_dataset, gradient_checkpointing=True,
                                           checkpoint_every_layers=2)
    layers = run.parallel.unwrap(run.body).lm.get_decoder().layers
    assert [layer.gradient_checkpointing for layer in layers] == [True, False, True, False]
    _assert_same(todays, (values, grads), rtol=0, atol=0)


def test_fused_head_gives_the_eager_losses_and_gradients(gqa_model_dir, tiny_dataset, todays):
    """``training.fused_head`` reaches the head: its chunks take the compiled passes, which sum in another order."""
    calls = compiled_chunk.cache_info()
    values, grads, _ = _loss_and_gradients(gqa_model_dir, tiny_dataset, fused_head=True)
    assert compiled_chunk.cache_info().hits + compiled_chunk.cache_info().misses > calls.hits + calls.misses
    _assert_same(todays, (values, grads), rtol=1e-6, atol=1e-5)


@pytest.mark.slow
def test_compiled_layers_give_the_eager_losses_and_gradients(gqa_model_dir, tiny_dataset, todays):
    values, grads, run = _loss_and_gradients(gqa_model_dir, tiny_dataset, compile_layers=True)
    layers = run.parallel.unwrap(run.body).lm.get_decoder().layers
    assert all(layer._compiled_call_impl is not None for layer in layers)
    _assert_same(todays, (values, grads), rtol=1e-6, atol=1e-5)


def test_adamw_auto_is_fused_on_cuda_and_torchs_choice_on_cpu(gqa_model_dir, tiny_dataset):
    assert speed.fused_adamw("auto", torch.device("cuda")) is True
    assert speed.fused_adamw("auto", torch.device("cpu")) is None
    assert speed.fused_adamw("default", torch.device("cuda")) is None
    assert speed.fused_adamw("fused", torch.device("cpu")) is True
    with pytest.raises(ValueError, match=r"training.adamw: expected one of \['auto', 'default', 'fused'\], got 'x'"):
        speed.fused_adamw("x", torch.device("cpu"))
    *_, run = _loss_and_gradients(gqa_model_dir, tiny_dataset)  # the default config on CPU: as before
    assert run.optimizer.optimizer.defaults["fused"] is None


def test_bad_body_settings_fail_before_any_work():
    with pytest.raises(ValueError, match="training.attention: expected one of"):
        speed.attention_mask_for("padded", torch.ones(1, 2))
    with pytest.raises(ValueError, match="training.checkpoint_every_layers: expected an integer >= 1, got 0"):
        speed.prepare_layers(None, TrainConfig(checkpoint_every_layers=0))


@pytest.fixture
def restored_torch_flags(monkeypatch):
    """Torch's process-wide kernel flags as they were, after the test."""
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    before = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.deterministic,
              torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.fp32_precision,
              torch.backends.cudnn.conv.fp32_precision)
    yield
    torch.use_deterministic_algorithms(before[0])
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = before[1:3]
    torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.conv.fp32_precision = before[3:]


def test_deterministic_switch_sets_the_bit_exact_kernels(restored_torch_flags, gqa_model_dir, tiny_dataset, todays):
    import os

    assert not torch.are_deterministic_algorithms_enabled()
    values, grads, _ = _loss_and_gradients(gqa_model_dir, tiny_dataset, deterministic=True)
    _assert_same(todays, (values, grads), rtol=0, atol=0)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"
    assert torch.are_deterministic_algorithms_enabled() and not torch.is_deterministic_algorithms_warn_only_enabled()
    assert torch.backends.cudnn.deterministic and not torch.backends.cudnn.benchmark
    assert torch.backends.cuda.matmul.fp32_precision == "ieee" == torch.backends.cudnn.conv.fp32_precision
