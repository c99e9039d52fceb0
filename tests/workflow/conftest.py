"""The CI config's toy base model, built once per test run and copied into the workflow tests' DAGs."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest
from workflow_helpers import CI_CONFIG, ROOT, TOY_BASE_MODEL, snakemake


@pytest.fixture(scope="session")
def ci_toy_base_model(tmp_path_factory, worker_id) -> Path:
    """A workdir in which Snakemake ran the CI config's ``toy_base_model`` job (its SFT, ~25 CPU s,
    the longest job of a toy DAG's start): built once per test run, by whichever xdist worker asks
    first while the other waits on a lock, and copied into a DAG's workdir by
    ``workflow_helpers.seed_toy_base_model``. The rule itself runs here, and in the SLURM run."""
    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":  # the workers' base directories share their parent
        shared = shared.parent
    workdir = shared / "ci-toy-base-model"
    with open(shared / "ci-toy-base-model.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (workdir / TOY_BASE_MODEL).is_dir():
            snakemake(ROOT, workdir, CI_CONFIG, TOY_BASE_MODEL, "--cores", "1")
    return workdir
