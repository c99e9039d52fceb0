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
