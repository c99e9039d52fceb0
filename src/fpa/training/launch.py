"""One training job, several processes: ``fpa train --processes P`` starts its own DDP ranks.

A job of rule ``train`` runs P processes inside its one allocation (one per GPU, or P CPU
ranks on gloo). With P > 1 the command replaces itself with ``torch.distributed.run``
(torchrun), which starts the same command line P times; each worker finds torchrun's
``LOCAL_RANK`` in its environment and trains its rank's share of every global batch
(``fpa.training.loop``). ``--standalone`` makes torchrun's rendezvous bind a free port on
localhost, so two jobs on one node never collide on a fixed port.

A job that spans N nodes (``--nodes N``, inside a SLURM allocation of N nodes) starts in
two stages. The job's command, on the allocation's first node, replaces itself with
``srun`` starting the same command once per node (``srun_command``); each of those replaces
itself with a torchrun of P ranks that meets the other nodes' torchruns at the rendezvous
``<first node of SLURM_JOB_NODELIST>:<port of the job id>`` (``node_launch_command``).
torchrun numbers the ranks ``RANK = node rank * P + LOCAL_RANK`` (node ranks in rendezvous
order), ``WORLD_SIZE = N * P``: the trainer needs nothing else (``fpa.training.loop``).

The job's CPUs are split evenly over its processes (``threads_per_process``): the rule's
``threads`` (= ``resources.train.cpus_per_task``) is the one source of the trainer's threads.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import sys
from typing import Mapping, Sequence

# torchrun sets it in every worker it starts (with RANK, WORLD_SIZE, MASTER_ADDR/PORT)
WORKER_VARIABLE = "LOCAL_RANK"
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# set by the job's srun in each node's task: that process starts the node's torchrun, not another srun
NODE_TASK_VARIABLE = "FPA_NODE_TASK"
# a multi-node job's rendezvous port, the same on every node: from the job id, so that two jobs
# sharing a first node differ; below Linux's ephemeral ports (32768-60999), which nothing binds on purpose
RENDEZVOUS_PORT_BASE = 20000
RENDEZVOUS_PORTS = 10000


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


def first_host(nodelist: str) -> str:
    """The first host of a SLURM hostlist: ``gpu[03-05,07],login1`` -> ``gpu03``."""
    match = re.match(r"(?:[^,\[]|\[[^\]]*\])+", nodelist)
    if match is None:
        raise ValueError(f"SLURM_JOB_NODELIST: expected a hostlist such as node[01-04], got {nodelist!r}")
    return re.sub(r"\[([^-,\]]+)[^\]]*\]", r"\1", match.group(0))


def srun_command(argv: Sequence[str], nodes: int, threads: int, python: str = sys.executable) -> list[str]:
    """srun starting ``python -m fpa <argv>`` once on each of the allocation's ``nodes``, with the
    job's ``threads`` CPUs each (a step gets the job's GPUs on each node by default)."""
    if nodes < 2:
        raise ValueError(f"--nodes: srun spans >= 2 nodes, got {nodes}")
    # --kill-on-bad-exit: a node whose ranks fail stops the others, which would wait at the next collective
    return ["srun", f"--nodes={nodes}", f"--ntasks={nodes}", "--ntasks-per-node=1", f"--cpus-per-task={threads}",
            "--kill-on-bad-exit=1", f"--export=ALL,{NODE_TASK_VARIABLE}=1", python, "-m", "fpa", *argv]


def node_launch_command(argv: Sequence[str], nodes: int, processes: int, environ: Mapping[str, str],
                        python: str = sys.executable) -> list[str]:
    """torchrun of one node of a ``nodes``-node job: ``processes`` ranks here, rendezvous with the other
    nodes at the allocation's first node, on a port of the job id (``environ``: an srun task's)."""
    for name in ("SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NNODES"):
        if name not in environ:
            raise ValueError(f"--nodes {nodes}: {name} is not set; a multi-node job runs in a SLURM "
                             f"allocation, its nodes started by srun")
    if int(environ["SLURM_NNODES"]) != nodes:
        raise ValueError(f"--nodes: expected the step's nodes (SLURM_NNODES={environ['SLURM_NNODES']}), "
                         f"got {nodes}")
    job = environ["SLURM_JOB_ID"]
    port = RENDEZVOUS_PORT_BASE + int(job) % RENDEZVOUS_PORTS
    return [python, "-m", "torch.distributed.run", f"--nnodes={nodes}", f"--nproc-per-node={processes}",
            "--rdzv-backend=c10d", f"--rdzv-endpoint={first_host(environ['SLURM_JOB_NODELIST'])}:{port}",
            f"--rdzv-id={job}", "-m", "fpa", *argv]


def launch_env(environ: Mapping[str, str], threads: int, processes: int) -> dict[str, str]:
    """The workers' environment: OpenMP threads per process (torchrun would force 1)."""
    return {**environ, "OMP_NUM_THREADS": str(threads_per_process(threads, processes))}


def exec_launch(command: Sequence[str], threads: int, processes: int) -> None:
    """Replace this process with a launcher (srun or torchrun): signals (SLURM's cancel, Ctrl-C)
    reach it, and it stops every rank; its exit status is the job's."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(command[0], command, launch_env(os.environ, threads, processes))  # srun: found on PATH


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


def enter_ranks(args, nodes: int = 1) -> None:
    """A training command's first step. Outside a launcher, with ``nodes`` > 1: become srun over
    the same command line, then on each node torchrun; with ``--processes`` > 1 on one node:
    torchrun (never returns). In a rank or a single process, set ``args.threads`` to this
    process's share of the job's CPUs."""
    threads = threads_per_process(args.threads, args.processes)
    if nodes < 1:
        raise ValueError(f"--nodes: expected >= 1, got {nodes}")
    if is_worker():
        die_with_launcher()
    elif nodes > 1 and NODE_TASK_VARIABLE not in os.environ:
        if "SLURM_JOB_ID" not in os.environ or shutil.which("srun") is None:
            raise ValueError(f"--nodes {nodes}: SLURM_JOB_ID is not set or srun is not on PATH; a multi-node job "
                             f"runs in a SLURM allocation of {nodes} nodes")
        exec_launch(srun_command(args.argv, nodes, args.threads), args.threads, args.processes)
    elif nodes > 1:
        exec_launch(node_launch_command(args.argv, nodes, args.processes, os.environ), args.threads, args.processes)
    elif args.processes > 1:
        exec_launch(launch_command(args.argv, args.processes), args.threads, args.processes)
    args.threads = threads
