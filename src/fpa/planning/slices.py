"""What each job depends on beyond its files: the config slice in its ``params`` (as sorted
JSON, so Snakemake's params trigger re-runs exactly the jobs whose slice changed) and the
fingerprint of the code it runs (Snakemake's code trigger sees only the shell text)."""

from __future__ import annotations

import json

from fpa.analysis.preference_pairs import pair_loaders
from fpa.aggregation.grid import BASE_METHOD
from fpa.data.offline import DATASET_GRADER
from fpa.figures import FIGURES
from fpa.grading import grader_module
from fpa.objectives import get_objective
from fpa.online import ONLINE_METHODS
from fpa.provenance.fingerprint import code_fingerprint
from fpa.resources import job_processes

def as_json(obj) -> str:
    return json.dumps(obj, sort_keys=True)


class ConfigSlices:
    """Params of a ``Plan``'s jobs (``self.config``, ``self.run``, the benchmark lists)."""

    def bench_slice(self, name: str) -> dict:
        """A benchmark's config without its display ``label`` (a header change re-runs only tables)."""
        return {key: value for key, value in self.config["benchmarks"][name].items() if key != "label"}

    def benches_slice(self, names) -> dict:
        return {name: self.bench_slice(name) for name in names}

    def sampling_config(self, model: str, **slices) -> str:
        """What sampling ``model`` depends on: its prompts, the generation settings and ``slices``
        (``dataset=``, ``benchmark=`` or ``benchmarks=``)."""
        return as_json({**slices, "generation": self.config["generation"], **self.prompt_slice(model)})

    def prompt_slice(self, model: str) -> dict:
        """How ``model``'s prompts are rendered: its template, and its chat template's pinned date if it has one."""
        entry = self.config["models"][model]
        pinned = {"chat_date": entry["chat_date"]} if entry["chat_template"] else {}
        return {"prompt_template": entry["prompt_template"], "chat_template": entry["chat_template"], **pinned}

    def model_config(self, wildcards) -> str:
        return as_json(self.config["models"][wildcards.model])

    def benchmark_config(self, wildcards) -> str:
        return as_json(self.bench_slice(wildcards.bench))

    def catalog_entry_json(self, wildcards) -> str:
        return as_json(self.catalog_entry(wildcards.path))

    def run_json(self, wildcards) -> str:
        return as_json(self.run(wildcards).config_slice())

    def online_config(self, wildcards) -> str:
        """What an online run depends on beyond its run slice: the prompts and the generation backend."""
        return self.sampling_config(wildcards.model)

    def dataset_config(self, wildcards) -> str:
        return self.sampling_config(wildcards.model, dataset=self.config["dataset"])

    def toy_train_problems_config(self) -> str:
        dataset = self.config["dataset"]
        return as_json({key: dataset[key] for key in ("n_problems", "n_operands", "min_operands")})

    def step_dpo_config(self, wildcards) -> str:
        """What the Step-DPO dataset of a model depends on: its prompts and the split (no sampling)."""
        dataset = self.config["dataset"]
        return as_json({"dataset": {key: dataset[key] for key in ("source", "seed", "validation_fraction")},
                        **self.prompt_slice(wildcards.model)})

    def eval_config(self, wildcards) -> str:
        return self.sampling_config(wildcards.model, benchmark=self.bench_slice(wildcards.bench))

    def evaluate_config(self, wildcards) -> str:
        return self.sampling_config(wildcards.model, benchmarks=self.benches_slice(self.eval_benches))

    def generate_code_config(self, wildcards) -> str:
        return self.sampling_config(wildcards.model, benchmarks=self.benches_slice(self.code_benches))

    def curve_config(self, wildcards) -> str:
        return self.sampling_config(wildcards.model, benchmarks=self.benches_slice(self.config["curve_benchmarks"]))

    def selection_config(self, wildcards) -> str:
        bench = self.config["model_selection"]["benchmark"]
        return self.sampling_config(wildcards.model, benchmarks={bench: self.bench_slice(bench)})

    def future_policy_config(self, wildcards) -> str:
        settings = {**self.config["future_policy"], "max_length": self.run(wildcards).training["max_length"]}
        return self.sampling_config(wildcards.model, future_policy=settings,
                                    benchmarks=self.benches_slice(self.config["curve_benchmarks"][:1]))

    def entanglement_config(self, wildcards) -> str:
        return as_json({**self.config["entanglement"], "max_length": self.config["training"]["max_length"]})

    def entanglement_pairs(self, wildcards) -> dict:
        """The preference datasets measured beside the offline data (the paper's pilot), by name."""
        return {name: {"loader": loader, "path": self.catalog_file(name)}
                for name, loader in pair_loaders(self.config["entanglement"]["preference"], self.catalog).items()}

    def entanglement_pair_files(self, wildcards) -> list[str]:
        return [source["path"] for source in self.entanglement_pairs(wildcards).values()]

    def entanglement_pairs_json(self, wildcards) -> str:
        return as_json(self.entanglement_pairs(wildcards))

    def table_config(self, wildcards) -> str:
        return as_json(self.layouts[wildcards.table].to_json())

    def cost_config(self) -> str:
        methods = list(dict.fromkeys([BASE_METHOD, *self.methods]))
        return as_json({"models": self.models, "methods": methods, "seeds": self.seeds})

    def figure_config(self, wildcards) -> str:
        return as_json(self.figure_slice(wildcards.model, wildcards.figure))

    def dataset_grader(self) -> str:
        """The grader labelling the dataset's samples: the online methods' reward."""
        return DATASET_GRADER[self.config["dataset"]["source"]]

    def processes(self, group: str) -> int:
        """Processes of a job of the rules of ``group``: one per GPU, or its CPU ``processes``."""
        return job_processes(self.config["resources"][group])

    # code fingerprints

    def train_code(self, wildcards) -> str:
        objective = get_objective(self.run(wildcards).objective)
        return code_fingerprint("fpa.training.loop", objective.loss.__module__)

    def online_code(self, wildcards) -> str:
        return code_fingerprint("fpa.cli.train_online", "fpa.training.online.run", "fpa.training.online.trainer",
                                ONLINE_METHODS.module_of(self.run(wildcards).objective),
                                grader_module(self.dataset_grader()))

    def graders_code(self, command: str, benches) -> str:
        """Fingerprint of a command and the graders of ``benches``."""
        graders = {grader_module(self.config["benchmarks"][bench]["grader"]) for bench in benches}
        return code_fingerprint(command, *sorted(graders))

    def code_eval_code(self, wildcards) -> str:
        return self.graders_code("fpa.cli.code", [wildcards.bench])

    def validate_code(self, wildcards) -> str:
        """``fpa validate-benchmark`` and the grader whose gold check it runs (``fpa.grading.get_gold_check``)."""
        return self.graders_code("fpa.cli.data", [wildcards.bench])

    def figure_code(self, wildcards) -> str:
        return code_fingerprint("fpa.cli.figure", FIGURES.module_of(wildcards.figure))
