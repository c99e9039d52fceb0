"""A plan's figures: which are planned (``fpa.figures.planned_figures``), and each one's
slice, inputs and caption, computed once per (model, figure) rather than once per use."""

from __future__ import annotations

import functools

from fpa.figures import FIGURES, dag_inputs, figure_caption, figure_slice, planned_figures

FIGURE_FORMATS = ("png", "pdf")
FIGURE_TABLE_FORMATS = ("csv", "md", "html")


class FigurePlan:
    """Figures of a ``Plan`` (``self.config``, ``self.runs``)."""

    def __init__(self):
        self._planned = planned_figures(self.config, self.runs)

    def planned_figures(self) -> list[tuple[str, str]]:
        """(model, figure) pairs the config asks for and has the runs of."""
        return self._planned

    @functools.cache
    def figure_slice(self, model: str, name: str) -> dict | None:
        return figure_slice(FIGURES[name], self.config, self.runs, model)

    @functools.cache
    def figure_dag_inputs(self, model: str, name: str) -> list[str]:
        return dag_inputs(name, self.figure_slice(model, name))

    def figure_outputs(self) -> list[str]:
        """Each planned figure, and the table of those that have one (Figure.table)."""
        return [f"results/figures/{self.config['experiment']}/{model}/{name}.{ext}"
                for model, name in self._planned
                for ext in FIGURE_FORMATS + (FIGURE_TABLE_FORMATS if FIGURES[name].table else ())]

    def figure_inputs(self, wildcards) -> list[str]:
        return self.figure_dag_inputs(wildcards.model, wildcards.figure)

    def figure_caption(self, wildcards) -> str:
        return figure_caption(FIGURES[wildcards.figure], self.figure_slice(wildcards.model, wildcards.figure))
