"""The files behind a figure's slice of the config (``fpa.planning.figures.figure_slice``): what
the figure job reads, per role and seed."""

from __future__ import annotations

from typing import Mapping

from fpa.figures import FIGURES
from fpa.figures.figure import BASE_ROLE, FigureInputs
from fpa.paths import ANALYSIS, CURVE, EVALUATION, TRAINING_METRICS


def figure_inputs(name: str, slice_: Mapping) -> FigureInputs:
    """The DAG's files behind ``figure_slice``: what the figure reads, per role and seed."""
    figure = FIGURES[name]
    model, seeds, files = slice_["model"], slice_["seeds"], slice_["files"]

    def per_seed(template: str, method: str, **wildcards) -> list[str]:
        return [template.format(model=model, method=method, seed=seed, **wildcards) for seed in seeds]

    return FigureInputs(
        seeds=seeds,
        metrics={role: per_seed(TRAINING_METRICS, method) for role, method in files.items()}
        if figure.uses_metrics else {},
        curves={role: per_seed(CURVE, method) for role, method in files.items()} if figure.uses_curves else {},
        # the base model's curve: the step 0 of every run's curve
        base_curves=per_seed(CURVE, BASE_ROLE) if figure.uses_curves and slice_["base"] else [],
        labels=dict(slice_["labels"]),
        styles=dict(slice_["styles"]),
        curve_benchmark=slice_.get("curve_benchmark"),
        evals={role: {bench: per_seed(EVALUATION, method, bench=bench) for bench in slice_["benchmarks"]}
               for role, method in files.items()} if figure.uses_evals else {},
        benchmarks=list(slice_["benchmarks"]),
        lam=dict(slice_["lam"]),
        analyses={role: per_seed(ANALYSIS[figure.analysis], method) for role, method in files.items()}
        if figure.analysis else {},
        stages={role: list(files_) for role, files_ in slice_.get("stages", {}).items()},
        curve_label=slice_.get("curve_label") or slice_.get("curve_benchmark"),
    )


def input_files(inputs: FigureInputs) -> list[str]:
    """Every file a figure reads."""
    evals = [paths for per_bench in inputs.evals.values() for paths in per_bench.values()]
    groups = (*inputs.metrics.values(), *inputs.curves.values(), inputs.base_curves, *evals,
              *inputs.analyses.values(), *inputs.stages.values())
    return list(dict.fromkeys(path for group in groups for path in group))
