"""The helpers of ``workflow/rules/train.smk``: each run trained offline (rule train) or online (rule
train_online), one job per (model, run, seed)."""

from __future__ import annotations

import re

from fpa import paths
from fpa.grading import dataset_graders, grader_module
from fpa.objectives import get_objective
from fpa.online import ONLINE_METHODS
from fpa.planning.shell import shell_words
from fpa.planning.stage import NOTHING, Stage, as_json, job_training
from fpa.planning.validation import NAME
from fpa.provenance.fingerprint import code_fingerprint


class TrainStage(Stage):
    def run_pattern(self, online: bool) -> str:
        """The online runs, or every other method (a path segment: the lookahead stops at the
        next path separator or the end)."""
        online_names = "|".join(map(re.escape, self.plan.online_runs)) or NOTHING
        return online_names if online else f"(?!(?:{online_names})(?:/|$)){NAME}"

    def run_json(self, wildcards) -> str:
        run_slice = self.plan.run(wildcards).config_slice()
        return as_json({**run_slice, "training": job_training(run_slice["training"])})

    def inputs(self, wildcards) -> dict[str, str]:
        model = wildcards.model
        inputs = {"model": self.plan.base_model(wildcards), "train": paths.TRAIN_SPLIT.format(model=model),
                  "val": paths.VAL_SPLIT.format(model=model)}
        if self.plan.run(wildcards).reads_reference_cache():
            inputs["reference"] = paths.REFERENCE_CACHE.format(model=model)
        return inputs

    def reference_option(self, wildcards, input) -> str:
        return shell_words("--reference", input.reference) if hasattr(input, "reference") else ""

    def code(self, wildcards) -> str:
        objective = get_objective(self.plan.run(wildcards).objective)
        return code_fingerprint("fpa.training.loop", objective.loss.__module__)

    # online runs

    def online_inputs(self, wildcards) -> dict[str, str]:
        """The base model and the training problems, less the offline dataset's held-out validation ones."""
        return {"model": self.plan.base_model(wildcards), "problems": paths.TRAIN_PROBLEMS,
                "exclude": paths.VAL_SPLIT.format(model=wildcards.model)}

    def online_config(self, wildcards) -> str:
        """What an online run depends on beyond its run slice: the prompts and the generation backend."""
        return self.plan.sampling_config(wildcards.model)

    def dataset_grader(self) -> str:
        """The grader labelling the dataset's samples: the online methods' reward."""
        return dataset_graders()[self.config["dataset"]["source"]]

    def online_code(self, wildcards) -> str:
        return code_fingerprint("fpa.cli.train_online", "fpa.training.online.run", "fpa.training.online.trainer",
                                ONLINE_METHODS.module_of(self.plan.run(wildcards).objective),
                                grader_module(self.dataset_grader()))
