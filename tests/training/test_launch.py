"""Launching a training job's ranks: torchrun on one node, srun + torchrun over nodes, threads per process."""

from __future__ import annotations

import argparse

import pytest

from fpa.training.launch import (
    enter_ranks,
    first_host,
    is_worker,
    launch_command,
    launch_env,
    node_launch_command,
    srun_command,
    threads_per_process,
)


def test_launch_command_starts_the_same_command_in_n_standalone_ranks():
    argv = ["train", "--processes", "2", "--seed", "42"]
    command = launch_command(argv, 2, python="/venv/bin/python")
    assert command[:3] == ["/venv/bin/python", "-m", "torch.distributed.run"]
    # --standalone: rendezvous on a free localhost port, never a fixed one shared by concurrent jobs
    assert "--standalone" in command and not any("port" in part for part in command)
    assert "--nproc-per-node=2" in command
    assert command[-len(argv) - 2:] == ["-m", "fpa", *argv]


def test_one_process_is_not_launched():
    with pytest.raises(ValueError, match="--processes: a launch needs >= 2 processes, got 1"):
        launch_command(["train"], 1)


@pytest.mark.parametrize(("threads", "processes", "each"), [(16, 2, 8), (3, 2, 1), (1, 2, 1), (4, 1, 4)])
def test_the_jobs_cpus_are_split_over_its_processes(threads, processes, each):
    assert threads_per_process(threads, processes) == each
    assert launch_env({"PATH": "/bin"}, threads, processes) == {"PATH": "/bin", "OMP_NUM_THREADS": str(each)}


def test_bad_counts_are_named():
    with pytest.raises(ValueError, match="--processes: expected >= 1, got 0"):
        threads_per_process(4, 0)
    with pytest.raises(ValueError, match="--threads: expected >= 1, got 0"):
        threads_per_process(0, 2)


def test_torchrun_ranks_are_workers():
    assert is_worker({"LOCAL_RANK": "1", "RANK": "1", "WORLD_SIZE": "2"})
    assert not is_worker({"PATH": "/bin"})


@pytest.mark.parametrize(("nodelist", "first"), [
    ("gpu[03-05,07],login1", "gpu03"), ("node7", "node7"), ("a1,b[2-3]", "a1"),
    ("rack[2-3]-n[010-012]", "rack2-n010"), ("n[9,1]", "n9")])
def test_the_first_host_of_a_slurm_hostlist(nodelist, first):
    assert first_host(nodelist) == first


def test_srun_starts_the_command_once_per_node_with_the_jobs_cpus():
    argv = ["train", "--nodes", "2", "--processes", "2"]
    assert srun_command(argv, 2, 4, python="/venv/bin/python") == [
        "srun", "--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--cpus-per-task=4", "--kill-on-bad-exit=1",
        "--export=ALL,FPA_NODE_TASK=1", "/venv/bin/python", "-m", "fpa", *argv]
    with pytest.raises(ValueError, match="--nodes: srun spans >= 2 nodes, got 1"):
        srun_command(argv, 1, 4)


SRUN_TASK = {"SLURM_JOB_ID": "4711", "SLURM_JOB_NODELIST": "gpu[03-04]", "SLURM_NNODES": "2", "SLURM_NODEID": "1"}


def test_each_node_runs_torchrun_meeting_the_others_at_the_first_node():
    argv = ["train", "--nodes", "2", "--processes", "4"]
    assert node_launch_command(argv, 2, 4, SRUN_TASK, python="/venv/bin/python") == [
        "/venv/bin/python", "-m", "torch.distributed.run", "--nnodes=2", "--nproc-per-node=4",
        "--rdzv-backend=c10d", "--rdzv-endpoint=gpu03:24711", "--rdzv-id=4711", "-m", "fpa", *argv]
    # the port follows the job: another job on the same first node rendezvous elsewhere
    assert "--rdzv-endpoint=gpu03:20005" in node_launch_command(argv, 2, 4, {**SRUN_TASK, "SLURM_JOB_ID": "90005"})


def test_a_node_launch_outside_srun_or_of_another_size_is_named():
    with pytest.raises(ValueError, match="--nodes 2: SLURM_JOB_NODELIST is not set"):
        node_launch_command(["train"], 2, 2, {"SLURM_JOB_ID": "1", "SLURM_NNODES": "2"})
    with pytest.raises(ValueError, match=r"--nodes: expected the step's nodes \(SLURM_NNODES=3\), got 2"):
        node_launch_command(["train"], 2, 2, {**SRUN_TASK, "SLURM_NNODES": "3"})


def test_a_multi_node_job_outside_slurm_is_refused_before_any_launch(monkeypatch):
    for name in ("SLURM_JOB_ID", "LOCAL_RANK", "FPA_NODE_TASK"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="--nodes 2: SLURM_JOB_ID is not set or srun is not on PATH"):
        enter_ranks(argparse.Namespace(argv=["train"], processes=2, threads=2), nodes=2)
