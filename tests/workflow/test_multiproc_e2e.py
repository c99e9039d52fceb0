"""A training job of several processes, launched by the DAG: the CI config's ``train`` job with
``resources.train.processes: 2`` runs 2 gloo ranks inside the one job and writes the checkpoint
that 1 process writes for the same global batch (within float tolerance).

One method, one seed, one epoch of the CI dataset: the upstream jobs run once, the training job
twice (1 process, then forced again with 2).
"""

from __future__ import annotations

import pytest
import torch
from workflow_helpers import ONE_RUN_CHECKPOINT, copy_project, one_run_config, one_run_trained, snakemake

pytestmark = pytest.mark.slow


def test_two_gloo_processes_train_the_checkpoint_of_one(tmp_path):
    project = copy_project(tmp_path)
    workdir = tmp_path / "work"
    one = one_run_config(project, {"cpus_per_task": 2}, tmp_path / "one.yaml")
    snakemake(project, workdir, one, "--cores", "2", ONE_RUN_CHECKPOINT)
    single, single_state = one_run_trained(workdir)

    two = one_run_config(project, {"processes": 2, "cpus_per_task": 2}, tmp_path / "two.yaml")
    snakemake(project, workdir, two, "--cores", "2", "--forcerun", "train", ONE_RUN_CHECKPOINT)
    ddp, ddp_state = one_run_trained(workdir)

    assert (single_state["world"], ddp_state["world"]) == (1, 2)
    assert ddp_state["summary"]["steps"] == single_state["summary"]["steps"] > 1
    assert single.keys() == ddp.keys()
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], rtol=1e-4, atol=1e-5, msg=name)
