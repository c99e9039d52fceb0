"""A training job of several processes, launched by the DAG: the CI config's ``train`` job with
``resources.train.processes: 2`` runs 2 gloo ranks inside the one job and writes the checkpoint
that 1 process writes for the same global batch (within float tolerance).

One method, one seed, one epoch of the CI dataset: the upstream jobs run once, the training job
twice (1 process, then forced again with 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file
from workflow_helpers import copy_project, snakemake

pytestmark = pytest.mark.slow

CHECKPOINT = "results/train/toy/offrl/1/checkpoint"


def _config(project: Path, resources: dict, path: Path) -> Path:
    """The CI config cut to the offrl run on seed 1, one epoch, no curves or figures."""
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    for key in ("figures", "future_policy", "entanglement", "curve_benchmarks"):
        config.pop(key)
    config["tables"] = {"toy": ["toy6"]}
    config["methods"] = {"offrl": config["methods"]["offrl"]}
    config["seeds"] = [1]
    config["training"].update(epochs=1, snapshot_every=0)
    config["resources"] = {"train": resources}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _trained(workdir: Path) -> tuple[dict[str, torch.Tensor], dict]:
    checkpoint = workdir / CHECKPOINT
    return load_file(str(checkpoint / "model.safetensors")), json.loads((checkpoint / "training_state.json").read_text())


def test_two_gloo_processes_train_the_checkpoint_of_one(tmp_path):
    project = copy_project(tmp_path)
    workdir = tmp_path / "work"
    one = _config(project, {"cpus_per_task": 2}, tmp_path / "one.yaml")
    snakemake(project, workdir, one, "--cores", "2", CHECKPOINT)
    single, single_state = _trained(workdir)

    two = _config(project, {"processes": 2, "cpus_per_task": 2}, tmp_path / "two.yaml")
    snakemake(project, workdir, two, "--cores", "2", "--forcerun", "train", CHECKPOINT)
    ddp, ddp_state = _trained(workdir)

    assert (single_state["world"], ddp_state["world"]) == (1, 2)
    assert ddp_state["summary"]["steps"] == single_state["summary"]["steps"] > 1
    assert single.keys() == ddp.keys()
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], rtol=1e-4, atol=1e-5, msg=name)
