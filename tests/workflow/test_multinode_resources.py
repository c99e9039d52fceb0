"""A training job over several nodes: its config keys, their checks, and what it asks SLURM for.

The request is in the SLURM executor plugin's names; what each becomes on the sbatch line is
the plugin's own ``get_submit_command`` (2.8.0), run here on the request.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from workflow_helpers import planned_resources

from fpa.config import ConfigError
from fpa.planning import validate_config
from fpa.resources import job_request, job_world

ROOT = Path(__file__).resolve().parents[2]


def _ci_config(**train) -> dict:
    config = yaml.safe_load((ROOT / ".test" / "config_ci" / "config.yaml").read_text())
    config.setdefault("resources", {})["train"] = train
    return config


def test_a_single_node_jobs_request_is_its_config():
    train = validate_config(_ci_config(gpu=2, cpus_per_task=8), where="cfg.yaml")["resources"]["train"]
    assert train["nodes"] == 1
    assert job_request(train) == train
    assert job_world(train) == 2


@pytest.mark.parametrize(("train", "added", "world"), [
    ({"nodes": 2, "processes": 2, "cpus_per_task": 2}, {"tasks": 2, "mpi": "srun"}, 4),
    ({"nodes": 4, "gpu": 8, "cpus_per_task": 64}, {"tasks": 4, "mpi": "srun", "gres": "gpu:8", "tasks_per_gpu": 0}, 32),
])
def test_a_multi_node_job_asks_one_task_per_node_and_its_gpus_per_node(train, added, world):
    train = validate_config(_ci_config(**train), where="cfg.yaml")["resources"]["train"]
    request = job_request(train)
    assert request == {**{key: value for key, value in train.items() if key != "gpu"}, **added}
    assert job_world(train) == world


@pytest.mark.skipif(importlib.util.find_spec("snakemake_executor_plugin_slurm") is None,
                    reason="snakemake-executor-plugin-slurm is not installed (the test extra pins it)")
def test_the_plugin_turns_the_request_into_one_task_per_node_with_gpus_per_node():
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    train = validate_config(_ci_config(nodes=2, gpu=4, cpus_per_task=16), where="cfg.yaml")["resources"]["train"]
    job = SimpleNamespace(resources=SimpleNamespace(**job_request(train), get=job_request(train).get),
                          threads=16)
    params = dict(run_uuid="run", slurm_logfile="log", comment_str="rule_train", account="-A acc",
                  partition="-p gpu", workdir=None)
    flags = (get_submit_command(job, params) + set_gres_string(job)).split()
    assert {"--nodes=2", "--ntasks=2", "--cpus-per-task=16", "--gres=gpu:4"} <= set(flags), flags
    assert not [flag for flag in flags if flag.startswith(("--gpus", "--ntasks-per-gpu"))], flags


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda c: c["resources"].update(evaluate={"nodes": 2}),
     "resources.evaluate.nodes: only rule train runs several processes (or nodes); remove it"),
    (lambda c: c["resources"]["train"].update(nodes=0), "resources.train.nodes: expected number >= 1"),
    (lambda c: c["methods"].update(grpo={"online": "grpo"}),
     "resources.train.nodes: the online runs (grpo) run on one node (their TRL trainer counts one node's "
     "processes), got nodes: 2"),
])
def test_bad_multi_node_requests_are_named(mutate, expected):
    config = _ci_config(nodes=2, processes=2, cpus_per_task=2)
    mutate(config)
    with pytest.raises(ConfigError, match="^cfg.yaml: ") as info:
        validate_config(config, where="cfg.yaml")
    assert expected in str(info.value)


def test_a_two_node_training_job_is_planned_with_its_request_and_command(tmp_path):
    from fpa.cli import build_parser

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(_ci_config(nodes=2, gpu=4, cpus_per_task=16)))
    target = "results/train/toy/offrl/1/checkpoint"
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "16", "-d", str(tmp_path), target,
                             "--configfile", str(config)],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    [(_, resources)] = [job for job in planned_resources(text) if job[0] == "train"]
    assert {key: resources.get(key) for key in ("nodes", "tasks", "mpi", "gres", "tasks_per_gpu", "gpu")} == {
        "nodes": "2", "tasks": "2", "mpi": "srun", "gres": "gpu:4", "tasks_per_gpu": "0", "gpu": None}
    [command] = re.findall(r"^Shell command: (?:export \S+; )*python -m fpa (train .*?) > \S+ 2>&1$", text, flags=re.M)
    args = build_parser("train").parse_args(shlex.split(command))
    assert (args.nodes, args.processes, args.threads) == (2, 4, 16)
