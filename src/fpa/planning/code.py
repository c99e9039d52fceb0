"""The helpers of ``workflow/rules/code.smk``: the code benchmarks' completions generated per checkpoint
(rule generate_code) and graded in the sandbox per benchmark (rule evaluate_code), and a code dataset's
training problems."""

from __future__ import annotations

import re

from fpa.data.dataset_files import CODE_TRAIN_FILES
from fpa.planning.stage import Stage


class CodeStage(Stage):
    def bench_pattern(self) -> str:
        return "|".join(map(re.escape, self.plan.code_benches))

    def records(self) -> list[str]:
        return [self.plan.benchmark_file(bench) for bench in self.plan.code_benches]

    def generate_config(self, wildcards) -> str:
        benchmarks = self.plan.benches_slice(self.plan.code_benches)
        return self.plan.sampling_config(wildcards.model, benchmarks=benchmarks)

    def bench_records(self, wildcards) -> str:
        return self.plan.benchmark_file(wildcards.bench)

    def tasks(self, wildcards) -> str:
        """The task file the code grader reads (tests): the column's one catalog part."""
        bench = self.config["benchmarks"][wildcards.bench]
        if bench["source"] == "file":
            return bench["path"]
        return self.plan.catalog_file(bench["parts"][0])

    def eval_config(self, wildcards) -> str:
        return self.plan.sampling_config(wildcards.model, benchmark=self.plan.bench_slice(wildcards.bench))

    def eval_code(self, wildcards) -> str:
        return self.plan.graders_code("fpa.cli.code", [wildcards.bench])

    def train_files(self, wildcards) -> dict[str, str]:
        return {name: self.plan.catalog_file(name) for name in CODE_TRAIN_FILES}
