"""Every integer of the schema has the range its consumers hold (issue 42): the issue's seed
10^30 passed check-config and ended planning in Snakemake's PeriodicWildcardError."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
import torch

from fpa.config.schema import integer_fields, load_schema

FIELDS = integer_fields(load_schema())
SEEDS = {path: node for path, node in FIELDS.items() if "seed" in path[-1] or "seeds" in path}
C_INT_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_int) - 1) - 1


def test_the_walk_finds_every_integer_field_of_the_schema():
    names = {".".join(path) for path in FIELDS}
    assert {"seeds.[]", "dataset.seed", "methods.*.seeds.[]", "models.*.seeds.*.[]", "tables.*.seeds.[]",
            "training.batch_problems", "training.chunk_size", "resources.train.nodes", "resources.light.processes",
            "benchmarks.*.records", "tables.*.columns.[].k", "future_policy.anchor_step"} <= names
    assert len(SEEDS) == 5


@pytest.mark.parametrize("path", FIELDS, ids=".".join)
def test_every_integer_field_is_bounded_below_and_above(path):
    node = FIELDS[path]
    assert 0 <= node["minimum"] <= node["maximum"], node
    assert node["maximum"] == (np.iinfo(np.uint32).max if path in SEEDS else C_INT_MAX), path


def test_the_seed_bound_is_what_numpy_torch_and_the_seed_wildcard_hold():
    """transformers.set_seed (TRL's trainer) and vLLM's engine call np.random.seed: 2^32 - 1 at most."""
    top = {node["maximum"] for node in SEEDS.values()}.pop()
    np.random.seed(top)
    torch.Generator().manual_seed(top * 1000 + 99)  # fpa.training.batches: seed * 1000 + epoch
    with pytest.raises(ValueError, match="Seed must be between 0 and 2\\*\\*32 - 1"):
        np.random.seed(top + 1)
    with pytest.raises(ValueError):
        np.random.seed(-1)
    assert len(str(top)) < 20  # Snakemake's PeriodicityDetector looks at wildcard values of 20 characters or more


def test_the_count_bound_is_a_c_int():
    """cpus_per_task becomes torch.set_num_threads(n), a C int; one more does not fit."""
    assert ctypes.c_int(C_INT_MAX).value == C_INT_MAX
    with pytest.raises(ValueError, match="Overflow when unpacking long"):
        torch.set_num_threads(C_INT_MAX + 1)
