"""The reference cache reproduces the online reference exactly (up to the storage rounding)."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM

from fpa.decoder.batch import collate
from fpa.io import read_json
from fpa.reference.cache import ReferenceCache, reference_cache_key, write_reference_cache
from fpa.reference.model import online_reference_hidden, reference_head_weight
from fpa.samples.tokenize import encode_sample
from fpa.training.head import token_statistics

MAX_LENGTH = 24


def load(model_dir):
    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()


def online(model_dir, samples, tokenizer):
    """z_ref of every sample computed alone (no padding), plus the collated batch."""
    model = load(model_dir)
    encoded = [encode_sample(tokenizer, s["prompt"], s["completion"], MAX_LENGTH) for s in samples]
    batch = collate(encoded, tokenizer.pad_token_id)
    alone = [online_reference_hidden(model, b)
             for b in (collate([e], tokenizer.pad_token_id) for e in encoded)]
    return model, batch, alone


def test_head_of_final_hidden_state_is_the_logits(tiny_model_dir):
    model = load(tiny_model_dir)
    ids = torch.randint(0, 97, (2, 11), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        z = model.get_decoder()(input_ids=ids).last_hidden_state
        assert torch.equal(z @ reference_head_weight(model).T, model(input_ids=ids).logits)
    if model.config.tie_word_embeddings:
        assert reference_head_weight(model) is model.get_input_embeddings().weight


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_cache_matches_online(tiny_model_dir, tiny_tokenizer, tiny_samples, tmp_path, dtype):
    manifest = write_reference_cache(tiny_model_dir, tiny_samples, tiny_tokenizer, tmp_path / "cache",
                                     max_length=MAX_LENGTH, dtype=dtype, shard_tokens=20, batch_size=2)
    key = reference_cache_key(tiny_model_dir, tiny_samples, max_length=MAX_LENGTH, dtype=dtype)
    cache = ReferenceCache(tmp_path / "cache", expected_key=key)
    model, batch, alone = online(tiny_model_dir, tiny_samples, tiny_tokenizer)
    assert len(manifest["shards"]) > 1 and manifest["bytes_per_million_tokens"] > 0
    assert cache.manifest == read_json(tmp_path / "cache" / "manifest.json")

    # z_ref: cached == online rounded to the storage dtype (batched padding may flip a last bit)
    storage = getattr(torch, dtype)
    order = [3, 0, 4, 1, 2]
    for got, want in zip(cache.hidden(order), [alone[i] for i in order]):
        assert got.dtype == storage
        rtol = 1e-5 if dtype == "float32" else 8e-3  # bf16: one ulp is 2^-8 relative
        torch.testing.assert_close(got.float(), want.to(storage).float(), atol=1e-5, rtol=rtol)

    # cached sequence ref_logp == recomputed from the stored z with the fp32 head
    cached = cache.batch(range(len(cache)))
    w_ref = cache.head_weight()
    assert torch.equal(w_ref, reference_head_weight(model).detach())
    assert torch.equal(cached.targets, batch.targets)
    recomputed = token_statistics(cached.hidden, w_ref, cached.targets, chunk_size=7)
    sums = torch.stack([t.sum() for t in recomputed.logp.split(cached.lengths.tolist())])
    torch.testing.assert_close(cached.ref_logp, sums, atol=1e-5, rtol=1e-6)
    torch.testing.assert_close(cached.ref_lse, (cached.hidden.float() @ w_ref.T).logsumexp(-1), atol=1e-5, rtol=1e-6)

    # FPA token statistics and gradients: cache vs online reference (z rounded like the cache)
    policy = torch.randn(len(batch.targets), 64, dtype=torch.float32, generator=torch.Generator().manual_seed(1))
    z_online = online_reference_hidden(model, batch)
    results = []
    for ref_hidden, ref_lse in ((cached.hidden, cached.ref_lse), (z_online.to(storage), None)):
        hidden, weight = policy.clone().requires_grad_(), w_ref.clone().requires_grad_()
        stats = token_statistics(hidden, weight, batch.targets, ref_hidden=ref_hidden, ref_weight=w_ref, lam=2.0,
                                 want_kl=True, chunk_size=5, ref_logsumexp=ref_lse)
        (stats.logp.sum() + stats.fwd_kl.sum()).backward()
        results.append([stats.logp, stats.ref_logp, stats.hat_logp, stats.fwd_kl, hidden.grad, weight.grad])
    for name, got, want in zip(("logp", "ref_logp", "hat_logp", "fwd_kl", "grad_hidden", "grad_weight"), *results):
        torch.testing.assert_close(got, want, atol=1e-4, rtol=1e-4, msg=lambda m: f"{name}: {m}")


def test_key_and_staleness(tiny_model_dir, tiny_tokenizer, tiny_samples, tmp_path):
    key = reference_cache_key(tiny_model_dir, tiny_samples, max_length=MAX_LENGTH)
    assert key != reference_cache_key(tiny_model_dir, tiny_samples, max_length=MAX_LENGTH + 1)
    assert key != reference_cache_key(tiny_model_dir, tiny_samples, max_length=MAX_LENGTH, dtype="float16")
    assert key != reference_cache_key(tiny_model_dir, tiny_samples[:-1], max_length=MAX_LENGTH)
    write_reference_cache(tiny_model_dir, tiny_samples[:2], tiny_tokenizer, tmp_path / "c", max_length=MAX_LENGTH)
    cache = ReferenceCache(tmp_path / "c")
    assert cache.indices(["s1", "s0"]) == [1, 0]
    with pytest.raises(ValueError, match="stale cache"):
        ReferenceCache(tmp_path / "c", expected_key=key)
    with pytest.raises(ValueError, match="not in the cache"):
        cache.indices(["s4"])


def test_failed_write_keeps_old_cache(tiny_model_dir, tiny_tokenizer, tiny_samples, tmp_path, monkeypatch):
    import fpa.reference.cache as module

    write_reference_cache(tiny_model_dir, tiny_samples[:2], tiny_tokenizer, tmp_path / "c", max_length=MAX_LENGTH)
    old_key = ReferenceCache(tmp_path / "c").key
    calls = []

    def crash_on_second_batch(*args):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed mid-write")
        return head_stats(*args)

    head_stats = module._head_stats
    monkeypatch.setattr(module, "_head_stats", crash_on_second_batch)
    with pytest.raises(RuntimeError, match="killed mid-write"):
        write_reference_cache(tiny_model_dir, tiny_samples, tiny_tokenizer, tmp_path / "c", max_length=MAX_LENGTH,
                              batch_size=2)
    assert ReferenceCache(tmp_path / "c").key == old_key
    assert [p.name for p in tmp_path.iterdir()] == ["c"]  # no temporary directory left behind
    with pytest.raises(ValueError, match="dtype: expected one of"):
        write_reference_cache(tiny_model_dir, tiny_samples, tiny_tokenizer, tmp_path / "d", max_length=MAX_LENGTH,
                              dtype="int8")


def test_the_cache_command_computes_on_the_gpu_it_is_given(monkeypatch, tmp_path, tiny_model_dir, tiny_samples):
    """``fpa cache-reference --device auto`` (and the rule's ``cuda``) hand the GPU to the cache writer,
    with the training's precision; ``cuda`` without a GPU is refused before any work."""
    import torch

    from fpa.cli import build_parser, reference as command
    from fpa.io import write_jsonl

    write_jsonl(tmp_path / "train.jsonl", tiny_samples[:3])
    write_jsonl(tmp_path / "val.jsonl", tiny_samples[3:])
    argv = ["cache-reference", "--model", str(tiny_model_dir), "--train", str(tmp_path / "train.jsonl"),
            "--val", str(tmp_path / "val.jsonl"), "--max-length", "64", "--precision", "bf16",
            "--out", str(tmp_path / "cache")]
    calls = []

    def writer(*args, **kwargs):
        calls.append(kwargs)
        return {"samples": 0}

    monkeypatch.setattr(command, "write_reference_cache", writer)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    for device in ("auto", "cuda"):
        args = build_parser("cache-reference").parse_args(argv + ["--device", device])
        args.handler(args)
    assert [(c["device"], c["precision"]) for c in calls] == [("cuda", "bf16"), ("cuda", "bf16")]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    args = build_parser("cache-reference").parse_args(argv + ["--device", "cuda"])
    with pytest.raises(ValueError, match="--device cuda: no CUDA device is visible"):
        args.handler(args)
