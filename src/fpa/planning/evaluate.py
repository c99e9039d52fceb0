"""The helpers of ``workflow/rules/evaluate.smk``: each checkpoint sampled and graded on the tables'
benchmarks (rule evaluate), each drawn run's snapshots on the curve benchmarks (rule curve), and
model selection among a run's snapshots (rule select_checkpoint)."""

from __future__ import annotations

from fpa import paths
from fpa.aggregation.grid import BASE_METHOD
from fpa.planning.shell import shell_words
from fpa.planning.stage import Stage, run_file


class EvaluateStage(Stage):
    def records(self, wildcards) -> list[str]:
        return [self.plan.benchmark_file(bench, wildcards.model) for bench in self.plan.eval_benches]

    def config_json(self, wildcards) -> str:
        return self.plan.sampling_config(wildcards.model, benchmarks=self.plan.benches_slice(self.plan.eval_benches))

    def code(self) -> str:
        return self.plan.graders_code("fpa.cli.evaluate", self.plan.eval_benches)

    # accuracy through training

    def curve_snapshots(self, wildcards) -> str:
        """A run's snapshots; the base model is the step 0 of every curve (method ``base``)."""
        if wildcards.method == BASE_METHOD:
            return self.plan.base_model(wildcards)
        return run_file(paths.SNAPSHOTS, wildcards)

    def curve_records(self, wildcards) -> list[str]:
        return [self.plan.benchmark_file(bench, wildcards.model) for bench in self.config["curve_benchmarks"]]

    def curve_args(self, wildcards, input) -> str:
        return " ".join(shell_words("--benchmark", bench, records)
                        for bench, records in zip(self.config["curve_benchmarks"], input.benchmarks))

    def curve_config(self, wildcards) -> str:
        curves = self.config["curve_benchmarks"]
        return self.plan.sampling_config(wildcards.model, benchmarks=self.plan.benches_slice(curves))

    def curve_code(self) -> str:
        return self.plan.graders_code("fpa.cli.curve", self.config["curve_benchmarks"])

    # model selection

    def selection_bench(self) -> str:
        return self.config["model_selection"]["benchmark"]

    def selection_records(self, wildcards) -> str:
        return self.plan.benchmark_file(self.selection_bench(), wildcards.model)

    def selection_config(self, wildcards) -> str:
        bench = self.selection_bench()
        return self.plan.sampling_config(wildcards.model, benchmarks={bench: self.plan.bench_slice(bench)})

    def selection_code(self) -> str:
        return self.plan.graders_code("fpa.cli.select", [self.selection_bench()])
