"""Where a plan's jobs read their inputs: models, checkpoints, benchmark records, catalog files."""

from __future__ import annotations

from pathlib import Path

from fpa.aggregation.grid import BASE_METHOD
from fpa.data.dataset_files import CODE_TRAIN_FILES, MATH12K_FILES, STEP_DPO_FILE
from fpa.data.download import ALL_SECTIONS, find_entry


class PlanPaths:
    """Input paths of a ``Plan`` (``self.config``, ``self.catalog``, ``self.run``)."""

    def base_model(self, wildcards) -> str:
        if self.config["models"][wildcards.model]["source"] == "hub":
            return f"resources/models/{wildcards.model}"
        return f"results/models/{wildcards.model}/base"

    def checkpoint(self, wildcards) -> str:
        """The model a run's evaluation samples: its final checkpoint, or its selected one
        (``model_selection``)."""
        if wildcards.method == BASE_METHOD:
            return self.base_model(wildcards)
        run = f"results/train/{wildcards.model}/{wildcards.method}/{wildcards.seed}"
        return f"{run}/selected" if self.config["model_selection"] else f"{run}/checkpoint"

    def curve_snapshots(self, wildcards) -> str:
        """A run's snapshots; the base model is the step 0 of every curve (method ``base``)."""
        if wildcards.method == BASE_METHOD:
            return self.base_model(wildcards)
        return f"results/train/{wildcards.model}/{wildcards.method}/{wildcards.seed}/snapshots"

    def benchmark_file(self, name: str, model: str | None = None) -> str:
        """The records file (JSONL) of benchmark ``name`` (of ``model`` for its validation split)."""
        bench = self.config["benchmarks"][name]
        if bench["source"] == "validation":
            return f"results/benchmarks/validation/{model}.jsonl"
        return f"results/benchmarks/{bench['source']}/{name}.jsonl"

    def user_benchmark(self, wildcards) -> str:
        """The JSONL of a ``source: file`` benchmark, which rule validate_benchmark checks."""
        return self.config["benchmarks"][wildcards.bench]["path"]

    def bench_records(self, wildcards) -> str:
        return self.benchmark_file(wildcards.bench)

    def eval_records(self, wildcards) -> list[str]:
        return [self.benchmark_file(bench, wildcards.model) for bench in self.eval_benches]

    def code_records(self) -> list[str]:
        return [self.benchmark_file(bench) for bench in self.code_benches]

    def curve_records(self, wildcards) -> list[str]:
        return [self.benchmark_file(bench, wildcards.model) for bench in self.config["curve_benchmarks"]]

    def selection_records(self, wildcards) -> str:
        return self.benchmark_file(self.config["model_selection"]["benchmark"], wildcards.model)

    def future_policy_bench(self, wildcards) -> str:
        """The benchmark whose prompts the future-policy analysis samples: the first curve benchmark."""
        return self.config["curve_benchmarks"][0]

    def future_policy_records(self, wildcards) -> str:
        return self.benchmark_file(self.future_policy_bench(wildcards), wildcards.model)

    def code_tasks(self, wildcards) -> str:
        """The task file the code grader reads (tests): the column's one catalog part."""
        bench = self.config["benchmarks"][wildcards.bench]
        if bench["source"] == "file":
            return bench["path"]
        return self.catalog_file(bench["parts"][0])

    def catalog_file(self, name: str) -> str:
        return f"resources/data/{find_entry(self.catalog, name)[1]['path']}"

    def catalog_entry(self, path: str) -> dict:
        """The catalog entry whose file is ``resources/data/<path>``."""
        for section in ALL_SECTIONS:
            for entry in self.catalog.get(section, {}).values():
                if entry.get("path") == path:
                    return entry
        raise ValueError(f"resources/data/{path}: not a file of {self.config['data']['catalog']}")

    def catalog_path(self) -> str:
        """``data.catalog``, relative to the workflow unless it is absolute or here."""
        path = Path(self.config["data"]["catalog"])
        return str(path if path.is_absolute() or path.is_file() else self.basedir / path)

    def benchmark_parts(self, wildcards) -> dict[str, str]:
        return {part: self.catalog_file(part) for part in self.config["benchmarks"][wildcards.bench]["parts"]}

    def math12k_files(self, wildcards) -> dict[str, str]:
        return {name: self.catalog_file(name) for name in MATH12K_FILES}

    def code_train_files(self, wildcards) -> dict[str, str]:
        return {name: self.catalog_file(name) for name in CODE_TRAIN_FILES}

    def train_inputs(self, wildcards) -> dict[str, str]:
        inputs = {"model": self.base_model(wildcards), "train": f"results/datasets/{wildcards.model}/train.jsonl",
                  "val": f"results/datasets/{wildcards.model}/val.jsonl"}
        run = self.run(wildcards)
        if run.reads_reference_cache():
            inputs["reference"] = f"results/reference/{wildcards.model}/cache"
        return inputs

    def online_inputs(self, wildcards) -> dict[str, str]:
        """The base model and the training problems, less the offline dataset's held-out validation ones."""
        return {"model": self.base_model(wildcards), "problems": "results/problems/train.jsonl",
                "exclude": f"results/datasets/{wildcards.model}/val.jsonl"}

    def validation_inputs(self, wildcards) -> dict[str, str]:
        """What a model's validation benchmark is built from: its dataset's validation split and the
        problems it was sampled from, or (dataset.source step_dpo) the pairs it was built from."""
        source = ({"pairs": self.catalog_file(STEP_DPO_FILE)} if self.config["dataset"]["source"] == "step_dpo"
                  else {"problems": "results/problems/train.jsonl"})
        return {**source, "val": f"results/datasets/{wildcards.model}/val.jsonl"}

    def step_dpo_inputs(self, wildcards) -> dict[str, str]:
        """The pairs, and the base model when its chat template renders the prompts."""
        inputs = {"pairs": self.catalog_file(STEP_DPO_FILE)}
        if self.config["models"][wildcards.model]["chat_template"]:
            inputs["model"] = self.base_model(wildcards)
        return inputs
