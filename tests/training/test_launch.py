"""Launching a training job's ranks: the torchrun command, threads per process, who is a worker."""

from __future__ import annotations

import pytest

from fpa.training.launch import is_worker, launch_command, launch_env, threads_per_process


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
