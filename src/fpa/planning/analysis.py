"""The helpers of ``workflow/rules/analysis.smk``: the analyses behind the mechanism figures
(``fpa.analysis``), each planned only as an input of a figure the config asks for."""

from __future__ import annotations

from fpa.analysis.preference_pairs import pair_loaders
from fpa.planning.stage import Stage, as_json


class AnalysisStage(Stage):
    def future_policy_bench(self, wildcards) -> str:
        """The benchmark whose prompts the future-policy analysis samples: the first curve benchmark."""
        return self.config["curve_benchmarks"][0]

    def future_policy_records(self, wildcards) -> str:
        return self.plan.benchmark_file(self.future_policy_bench(wildcards), wildcards.model)

    def future_policy_config(self, wildcards) -> str:
        settings = {**self.config["future_policy"], "max_length": self.plan.run(wildcards).training["max_length"]}
        return self.plan.sampling_config(wildcards.model, future_policy=settings,
                                         benchmarks=self.plan.benches_slice(self.config["curve_benchmarks"][:1]))

    def entanglement_config(self, wildcards) -> str:
        return as_json({**self.config["entanglement"], "max_length": self.config["training"]["max_length"]})

    def entanglement_pairs(self, wildcards) -> dict:
        """The preference datasets measured beside the offline data (the paper's pilot), by name."""
        return {name: {"loader": loader, "path": self.plan.catalog_file(name)}
                for name, loader in pair_loaders(self.config["entanglement"]["preference"], self.plan.catalog).items()}

    def entanglement_pair_files(self, wildcards) -> list[str]:
        return [source["path"] for source in self.entanglement_pairs(wildcards).values()]

    def entanglement_pairs_json(self, wildcards) -> str:
        return as_json(self.entanglement_pairs(wildcards))
