"""What the helpers of each rules file share: their stage of the plan, how a job's config slice and a
run's files are written, and the wildcard constraint of a rule with nothing to make."""

from __future__ import annotations

import json

#: a wildcard constraint that no name matches (a rule with nothing to make)
NOTHING = "(?!)"


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


def run_file(template: str, wildcards) -> str:
    """A file of ``template`` (``fpa.paths``) of the run of a job's ``wildcards`` (model, method, seed)."""
    return template.format(model=wildcards.model, method=wildcards.method, seed=wildcards.seed)
