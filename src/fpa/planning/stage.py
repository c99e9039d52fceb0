"""What the helpers of each rules file share: their stage of the plan, how a job's config slice (a
training's settings as its job reads them) and a run's files are written, and the wildcard constraint
of a rule with nothing to make."""

from __future__ import annotations

import json
from typing import Mapping

from fpa.precision import torch_name

#: a wildcard constraint that no name matches (a rule with nothing to make)
NOTHING = "(?!)"
#: The training keys whose format a training job reads in torch's name (``fpa.training.parallel``, its
#: ``TrainConfig``): the config spells every format one way (``fpa.precision``'s name; the schema refuses
#: torch's), and the plan hands these to the job in torch's names, as every run made before was handed
#: them: a job's ``--run-json`` is its params, and another spelling there would re-run every training.
TORCH_NAMED = ("fsdp_param_dtype", "fsdp_reduce_dtype")


class Stage:
    """The helpers of the rules of one file, ``workflow/rules/<stage>.smk``, over the ``Plan`` they share
    (``fpa.planning.plan``: the config, its runs, the files and settings every stage reads)."""

    def __init__(self, plan):
        self.plan = plan
        self.config = plan.config


def as_json(obj) -> str:
    """A job's config slice as its ``params`` hold it: sorted JSON, so Snakemake's params trigger re-runs
    exactly the jobs whose slice changed."""
    return json.dumps(obj, sort_keys=True)


def job_training(training: Mapping) -> dict:
    """A run's training settings as its job reads them: the ``TORCH_NAMED`` formats in torch's names."""
    return {key: torch_name(value) if key in TORCH_NAMED and value != "auto" else value
            for key, value in training.items()}


def run_file(template: str, wildcards) -> str:
    """A file of ``template`` (``fpa.paths``) of the run of a job's ``wildcards`` (model, method, seed)."""
    return template.format(model=wildcards.model, method=wildcards.method, seed=wildcards.seed)
