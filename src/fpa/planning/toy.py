"""The helpers of ``workflow/rules/toy.smk``: the toy model, its training problems and benchmarks."""

from __future__ import annotations

from fpa.planning.stage import Stage, as_json


class ToyStage(Stage):
    def problems_config(self) -> str:
        """What the toy training problems depend on: their count and chain lengths."""
        dataset = self.config["dataset"]
        return as_json({key: dataset[key] for key in ("n_problems", "n_operands", "min_operands")})
