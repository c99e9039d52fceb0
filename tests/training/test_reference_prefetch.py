"""The reference cache's rows read ahead (``CachedReference.prefetch``) are the rows read when needed,
batch by batch in the trainer's order, whether each batch was asked for ahead or not."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoTokenizer

from fpa.io import read_jsonl
from fpa.objectives import get_objective
from fpa.reference.cache import ReferenceCache, write_reference_cache
from fpa.reference.inputs import make_reference
from fpa.training import batches as B
from fpa.training import loop
from fpa.training.session import TrainConfig, open_session


@pytest.mark.parametrize("objective", ["fpa", "dpo"])  # per-token rows (z_ref, W_ref); per-sequence log π_ref
def test_prefetched_rows_are_the_rows_read_when_needed(tmp_path, toy_model_dir, tiny_dataset, objective):
    train, val = read_jsonl(tiny_dataset / "train.jsonl"), read_jsonl(tiny_dataset / "val.jsonl")
    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    write_reference_cache(toy_model_dir, train + val, tokenizer, tmp_path / "cache", max_length=128)
    reference = make_reference(get_objective(objective), "cached", reference_dir=str(tmp_path / "cache"),
                               model_dir=str(toy_model_dir), train_samples=train, val_samples=val, device="cpu")
    cache = ReferenceCache(tmp_path / "cache")  # today's reading: the cache's rows of each batch, when needed
    encoded, groups = B.encode_dataset(tokenizer, train, 128), B.make_groups(train)
    micros = [micro for step in range(2) for micro in
              B.micro_batches(B.global_batch(groups, step, batch_problems=4, seed=3), 1)]
    for index, micro in enumerate(micros):
        batch = B.collate(micro, encoded, train, tokenizer.pad_token_id)
        got = reference.inputs(batch, "train")
        if index % 3 != 2 and index + 1 < len(micros):  # every third batch is not asked for ahead
            reference.prefetch(B.sample_indices(micros[index + 1]), "train")
        rows = cache.batch(cache.indices([train[i]["id"] for i in batch.sample_index.tolist()]))
        if objective == "fpa":
            assert torch.equal(got.hidden, rows.hidden) and torch.equal(got.logsumexp, rows.ref_lse)
            assert got.hidden.dtype == torch.bfloat16 and got.sequence_logp is None
        else:
            assert got.hidden is None and torch.equal(got.sequence_logp, rows.ref_logp)
    assert reference.pending == {}  # nothing read that no batch took


@pytest.mark.parametrize("objective", ["fpa", "kto"])  # KTO: a no-gradient pass over the step's micro-batches first
def test_each_step_reads_ahead_the_next_steps_first_rows(tmp_path, toy_model_dir, tiny_dataset, objective):
    """The last micro-batch of step n asks for step n + 1's first rows (the only read pending after it), the
    rows the cache gives read when needed, bit for bit; the last step asks for none. Only the run's very
    first read waits (KTO's gradient pass included, whose first rows its no-gradient pass asks for again)."""
    train, val = read_jsonl(tiny_dataset / "train.jsonl"), read_jsonl(tiny_dataset / "val.jsonl")
    write_reference_cache(toy_model_dir, train + val, AutoTokenizer.from_pretrained(toy_model_dir), tmp_path / "cache",
                          max_length=128, dtype="float32")
    cfg = TrainConfig.from_dict({"batch_problems": 4, "micro_batch_problems": 2, "max_length": 128,
                                      "chunk_size": 64})
    run, total = open_session(str(toy_model_dir), str(tiny_dataset / "train.jsonl"),
                              str(tiny_dataset / "val.jsonl"), str(tmp_path / "cache"), objective, {}, cfg, seed=3)
    assert total == 2
    run.body.train()
    loop._optimizer_step(run, 0)
    assert run.reference.reads_waited == 1
    first = B.micro_batches(B.global_batch(run.train.groups, 1, batch_problems=4, seed=3), 2)[0]
    key = ("train", tuple(B.sample_indices(first)))
    assert list(run.reference.pending) == [key]
    ahead = run.reference.pending[key].result()
    cache = ReferenceCache(tmp_path / "cache")
    indices = cache.indices([train[i]["id"] for i in key[1]])
    if objective == "fpa":
        now = cache.batch(indices)
        assert torch.equal(ahead.hidden, now.hidden) and torch.equal(ahead.ref_lse, now.ref_lse)
        assert torch.equal(ahead.targets, now.targets)
    else:
        assert torch.equal(ahead.ref_logp, cache.ref_logp(indices))
        assert torch.equal(ahead.lengths, cache.lengths(indices))
    loop._optimizer_step(run, 1)
    assert run.reference.pending == {} and run.reference.reads_waited == 1
