"""One training job, several processes: ``fpa train --processes P`` starts its own DDP ranks.

A job of rule ``train`` runs P processes inside its one allocation (one per GPU, or P CPU
ranks on gloo). With P > 1 the command replaces itself with ``torch.distributed.run``
(torchrun), which starts the same command line P times; each worker finds torchrun's
``LOCAL_RANK`` in its environment and trains its rank's share of every global batch
(``fpa.training.loop``). ``--standalone`` makes torchrun's rendezvous bind a free port on
localhost, so two jobs on one node never collide on a fixed port.

The job's CPUs are split evenly over its processes (``threads_per_process``): the rule's
``threads`` (= ``resources.train.cpus_per_task``) is the one source of the trainer's threads.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from typing import Mapping, Sequence

# torchrun sets it in every worker it starts (with RANK, WORLD_SIZE, MASTER_ADDR/PORT)
WORKER_VARIABLE = "LOCAL_RANK"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def is_worker(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether this process is a rank that a launcher (torchrun, accelerate launch) started."""
    return WORKER_VARIABLE in environ


def threads_per_process(threads: int, processes: int) -> int:
    """Torch threads of each of a job's ``processes``: its ``threads`` (CPUs) split evenly, at least 1."""
    if processes < 1:
        raise ValueError(f"--processes: expected >= 1, got {processes}")
    if threads < 1:
        raise ValueError(f"--threads: expected >= 1, got {threads}")
    return max(1, threads // processes)


def launch_command(argv: Sequence[str], processes: int, python: str = sys.executable) -> list[str]:
    """torchrun starting ``python -m fpa <argv>`` ``processes`` times on this node, rendezvous on a free port."""
    if processes < 2:
        raise ValueError(f"--processes: a launch needs >= 2 processes, got {processes}")
    return [python, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={processes}",
            "-m", "fpa", *argv]


def launch_env(environ: Mapping[str, str], threads: int, processes: int) -> dict[str, str]:
    """The workers' environment: OpenMP threads per process (torchrun would force 1)."""
    return {**environ, "OMP_NUM_THREADS": str(threads_per_process(threads, processes))}


def exec_launch(argv: Sequence[str], processes: int, threads: int) -> None:
    """Replace this process with the launcher: signals (SLURM's cancel, Ctrl-C) reach torchrun,
    which stops every rank; its exit status is the job's."""
    command = launch_command(argv, processes)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, launch_env(os.environ, threads, processes))


def die_with_launcher() -> None:
    """Have the kernel SIGKILL this rank when its launcher dies (Linux).

    torchrun starts each rank in a session of its own, so a SIGKILL of the launcher's process
    group (the OOM killer, ``kill -9 -PGID``) would leave the ranks training on, orphaned,
    finishing and writing the job's output after the job was killed.
    """
    if not sys.platform.startswith("linux"):
        return
    launcher = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != launcher:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGKILL)


def enter_ranks(args) -> None:
    """A training command's first step: with ``--processes`` > 1 outside a launcher, become
    torchrun over the same command line (never returns); in a rank or a single process, set
    ``args.threads`` to this process's share of the job's CPUs."""
    threads = threads_per_process(args.threads, args.processes)
    if args.processes > 1 and not is_worker():
        exec_launch(args.argv, args.processes, args.threads)
    if is_worker():
        die_with_launcher()
    args.threads = threads
