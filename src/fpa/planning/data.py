"""The helpers of ``workflow/rules/data.smk``: the catalog's files fetched, benchmarks prepared from
them or validated from a user's file, the MATH training problems, hub models fetched."""

from __future__ import annotations

from pathlib import Path

from fpa import paths
from fpa.catalog import ALL_SECTIONS, find_entry
from fpa.data.benchmarks import loader_module
from fpa.data.dataset_files import MATH12K_FILES
from fpa.planning.shell import shell_words
from fpa.planning.stage import Stage, as_json
from fpa.provenance.fingerprint import code_fingerprint


#: the keys of a model entry that rule build_models reads (``fpa.data.rehearsal_models.build_model``)
BUILT_MODEL_KEYS = ("hub_id", "architecture", "prompt_template", "chat_template")


class DataStage(Stage):
    def entry(self, path: str) -> dict:
        """The catalog entry whose file is ``resources/data/<path>``."""
        for section in ALL_SECTIONS:
            for entry in self.plan.catalog.get(section, {}).values():
                if entry.get("path") == path:
                    return entry
        raise ValueError(f"{paths.DATA_FILE.format(path=path)}: not a file of {self.config['data']['catalog']}")

    def entry_json(self, wildcards) -> str:
        return as_json(self.entry(wildcards.path))

    def mirror_option(self) -> str:
        mirror = self.config["data"]["mirror"]
        return shell_words("--mirror", mirror) if mirror else ""

    def catalog_path(self) -> str:
        """``data.catalog``, relative to the workflow unless it is absolute or here."""
        path = Path(self.config["data"]["catalog"])
        return str(path if path.is_absolute() or path.is_file() else self.plan.basedir / path)

    def benchmark_parts(self, wildcards) -> dict[str, str]:
        return {part: self.plan.catalog_file(part) for part in self.config["benchmarks"][wildcards.bench]["parts"]}

    def prepare_code(self, wildcards) -> str:
        """Fingerprint of prepare-benchmark and of the loaders of the benchmark's parts (a code family's module,
        found through the grader registry, is no static import of the command's)."""
        parts = self.config["benchmarks"][wildcards.bench]["parts"]
        modules = {loader_module(find_entry(self.plan.catalog, part)[1]["loader"]) for part in parts}
        return code_fingerprint("fpa.cli.data", *sorted(modules))

    def math12k_files(self, wildcards) -> dict[str, str]:
        return {name: self.plan.catalog_file(name) for name in MATH12K_FILES}

    def sample_option(self) -> str:
        """``--sample`` when the catalog is the data mirror's sample (its files are cut short)."""
        return "--sample" if self.plan.catalog.get("sample") else ""

    def model_mirror(self) -> str:
        """Where fetch_model reads the hub models (``fpa.data.models.model_mirror``); empty: the hub."""
        return self.plan.model_mirror or ""

    def built_mirror(self, wildcards) -> list[str]:
        """fetch_model's input: the mirror rule build_models writes, where the config builds its models."""
        return [paths.BUILT_MODEL_MIRROR] if self.config["data"]["build_models"] else []

    def built_models(self, wildcards) -> str:
        """What rule build_models builds: each hub model of the config, by what its build reads (its name on
        the hub, its shapes and the prompt its answerer follows; not its training settings)."""
        return as_json({"models": {name: {key: model[key] for key in BUILT_MODEL_KEYS if key in model}
                                   for name, model in self.config["models"].items() if model["source"] == "hub"}})

    def validate_code(self, wildcards) -> str:
        """``fpa validate-benchmark`` and the grader whose gold check it runs (``fpa.grading.get_gold_check``)."""
        return self.plan.graders_code("fpa.cli.data", [wildcards.bench])
