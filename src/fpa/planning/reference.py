"""The helpers of ``workflow/rules/reference.smk``: the base model's log-probabilities cached for training."""

from __future__ import annotations

from fpa.memory.training import compute_weights_dtype, reference_cache_dtype
from fpa.planning.stage import Stage


class ReferenceStage(Stage):
    def weights_dtype(self) -> str:
        """The dtype the reference cache's model computes in: the training's (``compute_weights_dtype``)."""
        return compute_weights_dtype(self.config["training"])

    def dtype(self) -> str:
        """The dtype the reference cache stores z_ref in: the input precision of the training's head
        products, on the training's device (``reference_cache_dtype``)."""
        return reference_cache_dtype(self.config["training"], self.plan.device("train"))
