"""The helpers of ``workflow/rules/dataset.smk``: each model's offline dataset (its own graded samples,
or the Step-DPO pairs) and its validation problems as a benchmark."""

from __future__ import annotations

from fpa import paths
from fpa.config.feasible import max_length_settings
from fpa.data.dataset_files import STEP_DPO_FILE
from fpa.planning.shell import shell_words
from fpa.planning.stage import Stage, as_json


class DatasetStage(Stage):
    def config_json(self, wildcards) -> str:
        """What sampling and building a model's dataset depend on."""
        return self.plan.sampling_config(wildcards.model, dataset=self.config["dataset"])

    def prompt_budget(self, wildcards) -> list[str]:
        """A hub model's prompt-budget check, which its sampling waits for (a toy model's prompts the judge
        counts itself, ``fpa.config.feasible``)."""
        toy = self.config["models"][wildcards.model]["source"] == "toy"
        return [] if toy else [paths.PROMPT_BUDGET.format(model=wildcards.model)]

    def prompt_budget_config(self, wildcards) -> str:
        """The model's prompts and every max_length its training prompts must fit, with the key that sets each."""
        settings = max_length_settings(self.config, self.plan.runs, wildcards.model)
        return as_json({"model": wildcards.model, "prompts": self.plan.prompt_slice(wildcards.model),
                        "max_length": settings})

    def step_dpo_inputs(self, wildcards) -> dict[str, str]:
        """The pairs, and the base model when its chat template renders the prompts."""
        inputs = {"pairs": self.plan.catalog_file(STEP_DPO_FILE)}
        if self.config["models"][wildcards.model]["chat_template"]:
            inputs["model"] = self.plan.base_model(wildcards)
        return inputs

    def step_dpo_config(self, wildcards) -> str:
        """What the Step-DPO dataset of a model depends on: its prompts and the split (no sampling)."""
        dataset = self.config["dataset"]
        return as_json({"dataset": {key: dataset[key] for key in ("source", "seed", "validation_fraction")},
                        **self.plan.prompt_slice(wildcards.model)})

    def model_option(self, wildcards, input) -> str:
        return shell_words("--model", input.model) if hasattr(input, "model") else ""

    def validation_inputs(self, wildcards) -> dict[str, str]:
        """What a model's validation benchmark is built from: its dataset's validation split and the
        problems it was sampled from, or (dataset.source step_dpo) the pairs it was built from."""
        source = ({"pairs": self.plan.catalog_file(STEP_DPO_FILE)} if self.config["dataset"]["source"] == "step_dpo"
                  else {"problems": paths.TRAIN_PROBLEMS})
        return {**source, "val": paths.VAL_SPLIT.format(model=wildcards.model)}

    def validation_source_option(self, wildcards, input) -> str:
        """``--pairs FILE`` or ``--problems FILE``: what ``validation_inputs`` gave the job."""
        if hasattr(input, "pairs"):
            return shell_words("--pairs", input.pairs)
        return shell_words("--problems", input.problems)
