"""What a job's requested resources mean for the processes it runs.

A job (config ``resources.<group>``, the SLURM plugin's names) is one allocation: ``gpu``
GPUs and ``cpus_per_task`` CPUs on one node. Rule ``train`` runs one DDP rank per GPU, or
``processes`` ranks on CPUs (gloo, a job with ``gpu: 0``), so a job's process count is
written in exactly one key. A vLLM job runs ``gpu / generation.tensor_parallel_size``
engine replicas, each on its own prompts (``fpa.generation.parallel``).
"""

from __future__ import annotations

from typing import Mapping

from fpa.config import ConfigError

#: the resource groups whose jobs sample with the configured generation backend
SAMPLING_GROUPS = ("sample_offline", "evaluate", "generate_code")


def job_processes(job: Mapping) -> int:
    """Ranks of a training job: one per GPU, else its ``processes`` (default 1)."""
    return job.get("gpu", 0) or job.get("processes", 1)


def check_resources(config: Mapping, where: str) -> None:
    """Raise ``ConfigError`` when a job's processes, CPUs and GPUs do not fit together."""
    for group, job in config["resources"].items():
        if "processes" in job and group != "train":
            raise ConfigError(f"{where}: resources.{group}.processes: only rule train runs several processes; "
                              f"remove it")
    train = config["resources"]["train"]
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
