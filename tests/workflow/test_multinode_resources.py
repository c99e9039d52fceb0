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

from fpa.errors import ConfigError
from fpa.planning import judge, judge_config
from fpa.resources import job_request, job_world

ROOT = Path(__file__).resolve().parents[2]


def _ci_config(**train) -> dict:
    config = yaml.safe_load((ROOT / ".test" / "config_ci" / "config.yaml").read_text())
    config.setdefault("resources", {})["train"] = train
    return config


def test_a_single_node_jobs_request_is_its_config():
    train = judge_config(_ci_config(processes=2, cpus_per_task=8), "cfg.yaml").config["resources"]["train"]
    assert train["nodes"] == 1
    assert job_request(train) == train
    assert job_world(train) == 2


def test_a_single_node_gpu_jobs_request_is_one_task_with_all_its_gpus():
    train = judge_config(_ci_config(gpu=2, cpus_per_task=8), "cfg.yaml").config["resources"]["train"]
    assert job_request(train) == {**train, "nodes": 1, "tasks_per_gpu": 0}
    assert job_world(train) == 2


@pytest.mark.parametrize(("train", "added", "world"), [
    ({"nodes": 2, "processes": 2, "cpus_per_task": 2}, {"tasks": 2, "mpi": "srun"}, 4),
    ({"nodes": 4, "gpu": 8, "cpus_per_task": 64}, {"tasks": 4, "mpi": "srun", "gres": "gpu:8", "tasks_per_gpu": 0}, 32),
])
def test_a_multi_node_job_asks_one_task_per_node_and_its_gpus_per_node(train, added, world):
    train = judge_config(_ci_config(**train), "cfg.yaml").config["resources"]["train"]
    request = job_request(train)
    assert request == {**{key: value for key, value in train.items() if key != "gpu"}, **added}
    assert job_world(train) == world


@pytest.mark.parametrize(("train", "own_partition", "partition"), [
    ({"nodes": 4, "gpu": 8, "cpus_per_task": 64}, None, "gpus"),  # its GPUs asked per node (gres), no gpu key
    ({"gpu": 2, "cpus_per_task": 8}, None, "gpus"),
    ({"gpu": 2, "cpus_per_task": 8}, "a100", "a100"),  # the config's own partition of the group
    ({"processes": 2, "cpus_per_task": 2}, None, None),  # on CPUs: the profile's slurm_partition
])
def test_the_plan_sends_the_jobs_that_compute_on_a_gpu_to_the_sites_gpu_partition(train, own_partition, partition):
    config = _ci_config(**train, **({"slurm_partition": own_partition} if own_partition else {}))
    plan = judge_config(config, "cfg.yaml", gpu_partition="gpus")
    assert plan.resources("train").get("slurm_partition") == partition
    assert "slurm_partition" not in plan.resources("light")
    assert "slurm_partition" not in judge_config(_ci_config(**train), "cfg.yaml").resources("train")


SLURM_PLUGINS = ("snakemake_executor_plugin_slurm", "snakemake_executor_plugin_slurm_jobstep")
needs_slurm_plugins = pytest.mark.skipif(any(importlib.util.find_spec(name) is None for name in SLURM_PLUGINS),
                                         reason="the SLURM executor plugins are not installed (the test extra pins them)")


class _PluginJob:
    """A job as the plugins read it: its resources (attributes and ``get``) and threads."""

    def __init__(self, request: dict, threads: int):
        self.resources = SimpleNamespace(**request, get=request.get, keys=request.keys)
        self.threads = threads

    def is_group(self) -> bool:
        return False


def _sbatch_flags(job: _PluginJob) -> set[str]:
    """The sbatch flags the executor plugin (2.8.0) builds for ``job``."""
    from snakemake_executor_plugin_slurm.submit_string import get_submit_command
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    params = dict(run_uuid="run", slurm_logfile="log", comment_str="rule_train", account="-A acc",
                  partition="-p gpu", workdir=None)
    return set((get_submit_command(job, params) + set_gres_string(job)).split())


@needs_slurm_plugins
def test_the_plugin_turns_the_request_into_one_task_per_node_with_gpus_per_node():
    train = judge_config(_ci_config(nodes=2, gpu=4, cpus_per_task=16), "cfg.yaml").config["resources"]["train"]
    flags = _sbatch_flags(_PluginJob(job_request(train), threads=16))
    assert {"--nodes=2", "--ntasks=2", "--cpus-per-task=16", "--gres=gpu:4"} <= flags, flags
    assert not [flag for flag in flags if flag.startswith(("--gpus", "--ntasks-per-gpu"))], flags


@needs_slurm_plugins
def test_the_papers_one_node_two_gpu_training_job_is_one_task_with_both_gpus():
    """Defect (issue 32's first GPU-hour): a 1-node job with gpu: 2 became --gpus=2
    --ntasks-per-gpu=1 (two tasks of one GPU) under config/paper.yaml's own request."""
    paper = judge([ROOT / "config" / "paper.yaml"]).config
    train = paper["resources"]["train"]
    flags = _sbatch_flags(_PluginJob({"tasks": 1, **job_request(train)}, threads=train["cpus_per_task"]))
    assert {"--nodes=1", f"--gpus={train['gpu']}"} <= flags, flags
    assert not [flag for flag in flags if flag.startswith(("--ntasks-per-gpu", "--gpus-per-task"))], flags


@needs_slurm_plugins
def test_a_one_node_two_gpu_training_job_is_one_task_whose_step_sees_both_gpus(monkeypatch):
    """sbatch as the executor plugin (2.8.0) builds it, then the job step as the jobstep plugin
    (0.6.1) starts it inside the allocation: one task with both GPUs, under a site whose
    default-resources set ``tasks: 1`` (which made the plugin ask ``--ntasks-per-gpu=1``: two
    tasks of one GPU each, the step seeing one of them)."""
    import snakemake_executor_plugin_slurm_jobstep as jobstep

    train = judge_config(_ci_config(gpu=2, cpus_per_task=8), "cfg.yaml").config["resources"]["train"]
    request = {"tasks": 1, **job_request(train)}  # a site default under the config's request
    job = _PluginJob(request, threads=8)
    flags = _sbatch_flags(job)
    assert {"--nodes=1", "--gpus=2", "--cpus-per-task=8"} <= flags, flags
    assert not [flag for flag in flags if flag.startswith(("--ntasks", "--gpus-per-task", "--gres"))], flags

    started = []

    class Step:
        def __init__(self, call, shell, text, stdin, env):
            started.append((call, env))

        def wait(self):
            return 0

    monkeypatch.setattr(jobstep.subprocess, "Popen", Step)
    # the batch step's environment on a node of such an allocation
    for name, value in {"SLURM_JOB_ID": "7", "SLURM_GPUS": "2", "SLURM_NTASKS_PER_GPU": "1",
                        "SLURM_GPU_BIND": "single:1", "SLURM_NTASKS": "2", "SBATCH_GPUS_PER_TASK": "1"}.items():
        monkeypatch.setenv(name, value)
    executor = object.__new__(jobstep.Executor)
    executor.gpu_job, executor.job_array_task = "2", False
    executor.workflow = SimpleNamespace(executor_settings=SimpleNamespace(pass_command_as_script=False))
    executor.logger = SimpleNamespace(debug=lambda *a: None, error=lambda *a: None)
    executor.format_job_exec = lambda job: "python -m fpa train --processes 2"
    executor.report_job_submission = executor.report_job_success = executor.report_job_error = lambda info: None
    executor.run_job(job)
    (call, env), = started
    step = shlex.split(call)
    assert step[:2] == ["srun", "-n1"] and {"--gpus=2", "--nodes=1", "--cpus-per-task=8"} <= set(step), step
    assert not [flag for flag in step if flag.startswith(("--gpus-per-task", "--gpu-bind", "--ntasks"))], step
    assert env["SLURM_JOB_ID"] == "7"
    assert not {"SLURM_NTASKS_PER_GPU", "SLURM_GPU_BIND", "SLURM_NTASKS", "SBATCH_GPUS_PER_TASK"} & set(env)


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
        judge_config(config, "cfg.yaml")
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
