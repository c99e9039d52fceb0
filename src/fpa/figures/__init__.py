"""The paper's figures: one module per figure, each defining ``FIGURE``; the registry is
built from the modules of this package, so adding a figure is adding a module.

A figure draws *roles* (e.g. ``offrl`` and ``fpa``), each filled by one method of the
config: the method named in ``figures.<figure>.<role>``, else the method named like the
role, else the first method whose objective is the role. A figure without fixed roles draws
every method (of its objectives) trained on all the config's seeds, or only the methods its
config names, under any key. A config lists the figures it
wants; each is planned per model, and not for a model whose runs leave a role unfilled (no error).
Which figures a config plans, and each one's slice of the config: ``fpa.planning.figures``. This
package draws a figure from its slice (``figure_inputs``, then ``FIGURES[name].draw``).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable, Mapping

_SUPPORT_MODULES = {"style", "data", "panels", "paths"}
BASE_ROLE = "base"


@dataclass(frozen=True)
class FigureInputs:
    """Per role, the files of each seed (aligned with ``seeds``), and how to label them."""

    seeds: list[int]
    metrics: dict[str, list[str]]  # role -> training_metrics.csv per seed
    curves: dict[str, list[str]]  # role -> curve CSV per seed (figures that use curves)
    base_curves: list[str]  # the base model's curve per seed (step 0)
    labels: dict[str, str]  # role -> method label as in the tables
    styles: dict[str, int]  # role -> its colour and line style (fpa.figures.style.line_style)
    curve_benchmark: str | None
    evals: dict[str, dict[str, list[str]]]  # role -> benchmark -> final evaluation per seed (figures that use evals)
    benchmarks: list[str]  # the first table's benchmarks (figures that use evals)
    lam: dict[str, float]  # role -> the run's FPA λ (0 for objectives without one)
    analyses: dict[str, list[str]]  # role -> the figure's analysis CSV per seed (figures with an analysis)
    # role -> the outputs a run needs before it trains (offline data, the reference cache when its
    # objective reads it), whose provenance says what they cost; empty for online runs
    stages: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    curve_label: str | None = None  # the curve benchmark as tables head it (benchmarks.<b>.label, else its name)

    def in_style_order(self, roles) -> list[str]:
        """``roles`` in the order of their styles: the fixed roles first (Off-RL, FPA, ...), then the
        others in config order. A figure's legend keeps it, whatever order its config slice's
        keys come in (the DAG passes the slice as sorted JSON)."""
        return sorted(roles, key=self.styles.__getitem__)

    def curves_read(self) -> list[str]:
        """Every curve CSV read, the base model's included."""
        return [path for paths in self.curves.values() for path in paths] + list(self.base_curves)


@dataclass(frozen=True)
class Figure:
    """A registered figure.

    Attributes:
      name: registry key, the ``figures:`` key in config and the output file name.
      roles: objectives the figure draws, in legend order; empty: every method of the config
        (with snapshots, for a figure that uses curves), each its own role.
      caption: what it shows (the report's caption; the runs drawn are appended).
      draw: ``FigureInputs -> matplotlib Figure``.
      uses_curves: needs accuracy through training (snapshots + curve benchmarks).
      uses_metrics: reads the runs' per-step training metrics.
      uses_evals: reads the runs' final evaluations on the first table's benchmarks.
      objectives: with empty ``roles``, only methods of these objectives (empty: all).
      analysis: the ``fpa.analysis`` result it draws (``results/analysis/<analysis>/...``), or None.
      of_base: draws the base model only (role ``base``), not training runs.
      uses_stages: reads what each run's data generation and reference cache cost (wall clock).
      table: ``FigureInputs -> pandas DataFrame``, the numbers behind the figure (``fpa figure-table``), or None.
      enabled: ``config -> bool``, whether the config has what the figure needs beyond its runs.
    """

    name: str
    roles: tuple[str, ...]
    caption: str
    draw: Callable[[FigureInputs], object]
    uses_curves: bool = False
    uses_metrics: bool = True
    uses_evals: bool = False
    objectives: tuple[str, ...] = ()
    analysis: str | None = None
    of_base: bool = False
    uses_stages: bool = False
    table: Callable[[FigureInputs], object] | None = None
    enabled: Callable[[Mapping], bool] | None = None


def _discover() -> dict[str, Figure]:
    figures = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name in _SUPPORT_MODULES:
            continue
        figure = importlib.import_module(f"{__name__}.{info.name}").FIGURE
        figures[figure.name] = figure
    return dict(sorted(figures.items()))


FIGURES = _discover()

# An objective that a figure draws in a fixed role (Off-RL, FPA, ...) has the same colour in every
# figure: the fixed roles of the registered figures take the palette's first styles, in registry
# order; the other methods of a figure take the next ones (fpa.figures.style.line_style).
ROLE_STYLES = {role: index for index, role in
               enumerate(dict.fromkeys(role for figure in FIGURES.values() for role in figure.roles))}


def figure_inputs(name: str, slice_: Mapping) -> FigureInputs:
    """The DAG's files behind ``figure_slice``: what the figure reads, per role and seed."""
    from fpa.figures import paths

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
