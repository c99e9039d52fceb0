"""The files behind a figure's slice of the config (``fpa.planning.figures.figure_slice``): what
the figure job reads, per role and seed."""

from __future__ import annotations

from typing import Mapping

from fpa.figures import FIGURES, paths
from fpa.figures.figure import FigureInputs


def figure_inputs(name: str, slice_: Mapping) -> FigureInputs:
    """The DAG's files behind ``figure_slice``: what the figure reads, per role and seed."""
    figure = FIGURES[name]
    model, seeds, files = slice_["model"], slice_["seeds"], slice_["files"]
    return FigureInputs(
        seeds=seeds,
        metrics={role: [paths.metrics_path(model, method, s) for s in seeds] for role, method in files.items()}
        if figure.uses_metrics else {},
        curves={role: [paths.curve_path(model, method, s) for s in seeds] for role, method in files.items()}
        if figure.uses_curves else {},
        base_curves=[paths.base_curve_path(model, s) for s in seeds] if figure.uses_curves and slice_["base"] else [],
        labels=dict(slice_["labels"]),
        styles=dict(slice_["styles"]),
        curve_benchmark=slice_.get("curve_benchmark"),
        evals={role: {b: [paths.eval_path(model, method, s, b) for s in seeds] for b in slice_["benchmarks"]}
               for role, method in files.items()} if figure.uses_evals else {},
        benchmarks=list(slice_["benchmarks"]),
        lam=dict(slice_["lam"]),
        analyses={role: [paths.analysis_path(figure.analysis, model, method, s) for s in seeds]
                  for role, method in files.items()} if figure.analysis else {},
        stages={role: list(files_) for role, files_ in slice_.get("stages", {}).items()},
        curve_label=slice_.get("curve_label") or slice_.get("curve_benchmark"),
    )


def input_files(inputs: FigureInputs) -> list[str]:
    """Every file a figure reads."""
    evals = [paths for per_bench in inputs.evals.values() for paths in per_bench.values()]
    groups = (*inputs.metrics.values(), *inputs.curves.values(), inputs.base_curves, *evals,
              *inputs.analyses.values(), *inputs.stages.values())
    return list(dict.fromkeys(path for group in groups for path in group))
