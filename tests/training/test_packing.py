"""Padding-free micro-batches (``training.attention: packed``, ``fpa.decoder.packing``) against today's
padded path (``masked``) on CPU, on a tiny Qwen3 with grouped K/V (4 query heads, 2 K/V heads) and the
tiny dataset's problems of 4 samples of unequal lengths, through the trainer's own session and step.

Tolerances, fp32: the packed row runs SDPA per sequence where the padded batch runs it over the padded
rows with a mask, so sums may round in another order. Per-token log-probs within 1e-5 absolute (they are
about -5; measured here: bit-identical, the CPU kernel skips the masked keys exactly); every gradient entry
of one optimizer step within 1e-5 of the largest entry of the padded path's, and the step's loss within
1e-5 absolute, for each objective of the registry (measured: at most 3.3e-7 of the largest entry; the
losses equal to the printed digits). bf16 (autocast over fp32 weights): SFT's losses of 3 steps within
1e-3 relative (measured: equal). The reference cache's stored fp32 hidden states within 1e-5 of the
largest (measured: equal).
"""

from __future__ import annotations

import pytest
import torch
from transformers import AutoTokenizer

from fpa.io import read_jsonl
from fpa.objectives import OBJECTIVES
from fpa.reference.cache import ReferenceCache, write_reference_cache
from fpa.training import batches as B
from fpa.training import loop
from fpa.training.session import Session, TrainConfig, open_session
from fpa.decoder.packing import lay_out, packed_attention, use_packed_attention

TRAINING = {"lr": 1e-3, "warmup_steps": 1, "epochs": 1, "batch_problems": 3, "micro_batch_problems": 1,
            "max_length": 128, "chunk_size": 32, "eval_every": 1}


def _samples(data) -> list[dict]:
    return read_jsonl(data / "train.jsonl") + read_jsonl(data / "val.jsonl")


def _write_cache(model_dir, data, path, packed: bool = False):
    """The fp32 reference cache of ``data``'s samples, its forward padded or ``packed``."""
    write_reference_cache(model_dir, _samples(data), AutoTokenizer.from_pretrained(model_dir), path, max_length=128,
                          dtype="float32", packed=packed)
    return path


@pytest.fixture(scope="module")
def reference_cache(tmp_path_factory, gqa_model_dir, tiny_dataset):
    return _write_cache(gqa_model_dir, tiny_dataset, tmp_path_factory.mktemp("reference") / "cache")


def _session(model_dir, data, cache, objective: str, attention: str, **overrides) -> Session:
    cfg = TrainConfig.from_dict({**TRAINING, "attention": attention, **overrides})
    run, _ = open_session(str(model_dir), str(data / "train.jsonl"), str(data / "val.jsonl"), str(cache),
                          objective, {}, cfg, seed=3)
    run.body.train()
    return run


def _step(run: Session, step: int = 0) -> tuple[dict, dict[str, torch.Tensor]]:
    """The metrics row of optimizer step ``step`` and the gradients it applies (read as AdamW steps)."""
    gradients = {}

    def read(optimizer, args, kwargs):
        gradients.update({name: p.grad.detach().clone() for name, p in run.body.named_parameters()})

    handle = run.optimizer.optimizer.register_step_pre_hook(read)
    row = loop._optimizer_step(run, step)
    handle.remove()
    return row, gradients


def test_a_packed_row_restarts_positions_and_keeps_each_sequence_whole():
    layout = lay_out([[5, 6, 7], [8], [9, 10]], pad_id=0, packed=True)
    assert layout.input_ids.tolist() == [[5, 6, 7, 8, 9, 10]]
    assert layout.position_ids.tolist() == [[0, 1, 2, 0, 0, 1]]
    assert (layout.sequence_lengths, layout.row, layout.start) == ((3, 1, 2), (0, 0, 0), (0, 3, 4))
    padded = lay_out([[5, 6, 7], [8], [9, 10]], pad_id=0, packed=False)
    assert padded.input_ids.tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]] and padded.position_ids is None


def test_packed_and_padded_batches_predict_the_same_tokens(gqa_model_dir, tiny_dataset, reference_cache):
    run = _session(gqa_model_dir, tiny_dataset, reference_cache, "offrl", "packed")
    micro = B.global_batch(run.train.groups, 0, batch_problems=3, seed=3)[:1]
    padded, packed = (B.collate(micro, run.train.encoded, run.train.samples, 0, layout) for layout in (False, True))
    assert packed.input_ids.shape == (1, int(padded.attention_mask.sum()))
    assert torch.equal(packed.targets, padded.targets) and torch.equal(packed.sequence, padded.rows)
    for batch in (padded, packed):  # the hidden state at a position predicts the token after it
        assert torch.equal(batch.input_ids[batch.rows, batch.positions + 1], batch.targets)


def test_packed_per_token_logprobs_equal_the_padded_ones(gqa_model_dir, tiny_dataset, reference_cache):
    logps = {}
    for attention in ("masked", "packed"):
        run = _session(gqa_model_dir, tiny_dataset, reference_cache, "offrl", attention)
        micro = B.global_batch(run.train.groups, 0, batch_problems=3, seed=3)[:1]
        batch = B.collate(micro, run.train.encoded, run.train.samples, 0, attention == "packed")

        def token_logp(hidden, weight):
            logits = hidden[batch.rows, batch.positions] @ weight.T
            return logits.log_softmax(-1).gather(1, batch.targets[:, None]).squeeze(1)

        mask = loop.attention_mask_for(attention, batch.attention_mask)
        with torch.no_grad():
            logps[attention] = run.body(batch.input_ids, mask, token_logp, batch.position_ids, batch.sequence_lengths)
    print(f"\nmax |Δ log π| per token: {(logps['packed'] - logps['masked']).abs().max():.2e}")
    torch.testing.assert_close(logps["packed"], logps["masked"], rtol=0, atol=1e-5)


@pytest.mark.parametrize("objective", sorted(OBJECTIVES))
def test_each_objective_takes_the_padded_step_packed(objective, gqa_model_dir, tiny_dataset, reference_cache):
    """One optimizer step of 3 micro-batches (pairs, groups and KTO's batch z0 included)."""
    (row, grads), (packed_row, packed_grads) = (
        _step(_session(gqa_model_dir, tiny_dataset, reference_cache, objective, attention))
        for attention in ("masked", "packed"))
    scale = max(float(g.abs().max()) for g in grads.values())
    worst = max(float((packed_grads[name] - grads[name]).abs().max()) for name in grads)
    print(f"\n{objective}: loss {row['loss']:.6f} / {packed_row['loss']:.6f}; max |Δ grad| / max |grad| "
          f"{worst / scale:.1e}")
    assert packed_grads.keys() == grads.keys()
    assert abs(packed_row["loss"] - row["loss"]) <= 1e-5
    for name in grads:
        torch.testing.assert_close(packed_grads[name], grads[name], rtol=0, atol=1e-5 * scale, msg=name)


def test_bf16_losses_of_packed_and_padded_steps_are_close(gqa_model_dir, tiny_dataset, reference_cache):
    losses = {}
    for attention in ("masked", "packed"):
        run = _session(gqa_model_dir, tiny_dataset, reference_cache, "sft", attention, precision="bf16")
        losses[attention] = torch.tensor([_step(run, step)[0]["loss"] for step in range(3)])
    print(f"\nbf16 losses masked {losses['masked'].tolist()} packed {losses['packed'].tolist()}")
    torch.testing.assert_close(losses["packed"], losses["masked"], rtol=1e-3, atol=0)


def test_the_reference_cache_written_packed_holds_the_padded_values(tmp_path, gqa_model_dir, tiny_dataset,
                                                                     reference_cache):
    _write_cache(gqa_model_dir, tiny_dataset, tmp_path / "cache", packed=True)
    rows = range(len(_samples(tiny_dataset)))
    padded, packed = (ReferenceCache(path).batch(rows) for path in (reference_cache, tmp_path / "cache"))
    scale = float(padded.hidden.abs().max())
    print(f"\ncache: max |Δ z_ref| / max |z_ref| {float((packed.hidden - padded.hidden).abs().max()) / scale:.1e}")
    assert torch.equal(packed.targets, padded.targets)
    torch.testing.assert_close(packed.hidden, padded.hidden, rtol=0, atol=1e-5 * scale)
    torch.testing.assert_close(packed.ref_lse, padded.ref_lse, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(packed.ref_logp, padded.ref_logp, rtol=1e-5, atol=1e-4)


def test_packed_attention_refuses_what_would_let_sequences_see_each_other():
    from transformers import BloomConfig, BloomForCausalLM

    query = key = value = torch.zeros(1, 2, 5, 4)
    with pytest.raises(ValueError, match="expected a packed row"):
        packed_attention(None, query, key, value, torch.ones(1, 1, 5, 5), sequence_lengths=(2, 3))
    with pytest.raises(ValueError, match="expected one row of 4 tokens"):
        packed_attention(None, query, key, value, None, sequence_lengths=(2, 2))
    bloom = BloomForCausalLM(BloomConfig(vocab_size=16, hidden_size=8, n_layer=1, n_head=2))
    with pytest.raises(ValueError, match="training.attention: packed needs .* BloomForCausalLM does not"):
        use_packed_attention(bloom)


def test_the_saved_policy_names_no_packed_attention(gqa_model_dir, tiny_dataset, reference_cache, tmp_path):
    """The packed attention is the trainer's: a checkpoint loads with Transformers' own (vLLM, evaluation)."""
    run = _session(gqa_model_dir, tiny_dataset, reference_cache, "offrl", "packed")
    lm = run.parallel.unwrap(run.body).lm
    assert lm.config._attn_implementation == "fpa_packed_sdpa"
    lm.save_pretrained(tmp_path)
    assert "fpa_packed_sdpa" not in (tmp_path / "config.json").read_text()
