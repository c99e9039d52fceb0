"""What a job's requested resources mean for the processes it runs.

A job (config ``resources.<group>``, the SLURM plugin's names) is one allocation: ``gpu``
GPUs and ``cpus_per_task`` CPUs on one node. Rule ``train`` runs one DDP rank per GPU, or
``processes`` ranks on CPUs (gloo, a job with ``gpu: 0``), so a job's process count is
written in exactly one key. A training job may span ``nodes`` nodes, each with those GPUs
(or processes), CPUs and memory: its world is nodes x ranks per node. A vLLM job runs
``gpu / generation.tensor_parallel_size`` engine replicas, each on its own prompts
(``fpa.generation.parallel``).
"""

from __future__ import annotations

from typing import Mapping

from fpa.errors import ConfigError

#: the resource groups whose jobs sample with the configured generation backend
SAMPLING_GROUPS = ("sample_offline", "evaluate", "generate_code")


def job_processes(job: Mapping) -> int:
    """Ranks of a training job: one per GPU, else its ``processes`` (default 1)."""
    return job.get("gpu", 0) or job.get("processes", 1)


def job_device(config: Mapping, group: str) -> str:
    """Where a job of ``group`` computes: ``cuda`` when it requests a GPU, else ``cpu``."""
    return "cuda" if config["resources"][group]["gpu"] else "cpu"


def job_world(job: Mapping) -> int:
    """Ranks of a training job over all its nodes: its data-parallel world size."""
    return job.get("nodes", 1) * job_processes(job)


def job_request(job: Mapping) -> dict:
    """A job's Snakemake resources (what the SLURM plugin turns into sbatch flags) from its config.

    A job over several nodes runs one task per node, and starts its steps itself (the plugin's
    ``mpi`` resource: the jobstep plugin runs the command in the batch step instead of in an
    srun step of one node, ``fpa.training.launch.srun_command``). Its GPUs are asked per node
    (``gres``): the plugin's ``gpu`` is ``--gpus``, the job's total, which SLURM may place
    unevenly over the nodes (and ``tasks_per_gpu: 0`` keeps the plugin from turning ``tasks``
    into ``--ntasks-per-gpu``). A GPU job on one node is one task with all its GPUs.
    """
    request = dict(job)
    nodes = job.get("nodes", 1)
    if nodes > 1:
        request.update(tasks=nodes, mpi="srun")
        if request.pop("gpu", 0):
            request.update(gres=f"gpu:{job['gpu']}", tasks_per_gpu=0)
    elif job.get("gpu", 0):
        # one task that sees every GPU of the job (the jobstep plugin's ``srun -n1 --gpus=G``), whose
        # torchrun starts a rank per GPU: with a ``tasks`` resource (a site's default-resources) the
        # plugin would ask ``--ntasks-per-gpu``, G tasks bound to one GPU each
        request.update(nodes=1, tasks_per_gpu=0)
    return request


#: The SLURM profile's default resource naming the site's partition of the jobs that ask for a GPU
#: (profiles/slurm); the other jobs take its ``slurm_partition``, the default of every job.
GPU_PARTITION = "gpu_partition"


def with_partition(request: Mapping, device: str, gpu_partition: str | None) -> dict:
    """``request`` (``job_request``'s) of a job computing on ``device`` (``job_device``'s), sent to
    ``gpu_partition`` when that is ``cuda`` and the request names no partition of its own (a config's
    ``resources.<group>.slurm_partition``); else unchanged."""
    if gpu_partition and device == "cuda" and "slurm_partition" not in request:
        return {**request, "slurm_partition": gpu_partition}
    return dict(request)


#: The resource groups whose jobs run where snakemake runs, never in a cluster's queue (Snakemake's
#: local rules): the downloads (a compute node may have no network) and the light jobs (checks,
#: tables, figures). Their requests carry ``RUNS_ON``, by which the Snakefile makes their rules local
#: (``local_rules``): a rule says only its group.
LOCAL_GROUPS = ("fetch", "light")
RUNS_ON = ("runs_on", "head_node")


def group_request(job: Mapping, group: str, device: str, gpu_partition: str | None) -> dict:
    """What a job of resource group ``group`` (config ``resources.<group>``: ``job``) computing on
    ``device`` asks for: ``job_request``'s, sent to its partition (``with_partition``), marked
    ``RUNS_ON`` where its group runs where snakemake runs."""
    request = with_partition(job_request(job), device, gpu_partition)
    return {**request, RUNS_ON[0]: RUNS_ON[1]} if group in LOCAL_GROUPS else request


def resource_text(resources, name: str) -> str | None:
    """The text of resource ``name`` among Snakemake's ``Resources`` (a profile's default resources,
    ``workflow.resource_settings.default_resources``; a rule's), or None where none is set."""
    resource = resources.get(name) if resources is not None else None
    raw = getattr(resource, "raw", None)
    return None if raw is None else str(raw)


def local_rules(rules) -> list[str]:
    """The names of ``rules`` (Snakemake's) whose jobs run where snakemake runs: their request is
    marked ``RUNS_ON`` (``group_request``)."""
    return [rule.name for rule in rules if resource_text(rule.resources, RUNS_ON[0]) == RUNS_ON[1]]


def check_resources(config: Mapping, where: str, runs: Mapping) -> None:
    """Raise ``ConfigError`` when a job's processes, CPUs and GPUs do not fit together (``runs``:
    the config's run grid, ``fpa.config.runs.expand_runs``)."""
    for group, job in config["resources"].items():
        for key in ("processes", "nodes"):
            if key in job and group != "train":
                raise ConfigError(f"{where}: resources.{group}.{key}: only rule train runs several processes "
                                  f"(or nodes); remove it")
    train = config["resources"]["train"]
    online = sorted({run.method for run in runs.values() if run.online})
    if train["nodes"] > 1 and online:
        raise ConfigError(f"{where}: resources.train.nodes: the online runs ({', '.join(online)}) run on one node "
                          f"(their TRL trainer counts one node's processes), got nodes: {train['nodes']}")
    if "processes" in train and train["gpu"] > 0:
        raise ConfigError(f"{where}: resources.train.processes: a GPU job runs one process per GPU (gpu: "
                          f"{train['gpu']}); set processes only with gpu: 0")
    if train["cpus_per_task"] < job_processes(train):
        raise ConfigError(f"{where}: resources.train.cpus_per_task: expected >= the job's {job_processes(train)} "
                          f"processes (a CPU each), got {train['cpus_per_task']}")
    tensor_parallel = config["generation"]["tensor_parallel_size"]
    for group in SAMPLING_GROUPS if config["generation"]["backend"] == "vllm" else ():
        gpus = config["resources"][group]["gpu"]
        if gpus % tensor_parallel:
            raise ConfigError(f"{where}: resources.{group}.gpu: expected a multiple of "
                              f"generation.tensor_parallel_size ({tensor_parallel}), got {gpus}")
