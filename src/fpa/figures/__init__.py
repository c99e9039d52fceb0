"""The paper's figures: one module per figure, each defining ``FIGURE``; the registry is
built from the modules of this package, so adding a figure is adding a module.

A figure draws *roles* (e.g. ``offrl`` and ``fpa``), each filled by one method of the
config: the method named in ``figures.<figure>.<role>``, else the method named like the
role, else the first method whose objective is the role. A figure without fixed roles draws
every method (of its objectives) trained on all the config's seeds, or only the methods its
config names, under any key. A config lists the figures it
wants; each is planned per model, and not for a model whose runs leave a role unfilled (no error).

    from fpa.figures import FIGURES, figure_slice
    from fpa.config import expand_runs
    figure_slice(FIGURES["training_dynamics"], config, expand_runs(config), "toy")
    # {"model": "toy", "roles": {"offrl": "offrl", "fpa": "fpa"}, "seeds": [...], ...} or None
"""

from __future__ import annotations

import dataclasses
import importlib
import itertools
import pkgutil
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from fpa.aggregation.layout import table_benchmarks

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


def style_indices(figure: Figure, roles: Mapping[str, str], by_name: Mapping) -> dict[str, int]:
    """role -> style index: a fixed role's own, or, in a figure of every method, the style of the
    method's objective where that is a fixed role (its first method, in config order), else the
    next free one. A method keeps its colour whichever other methods the figure draws."""
    styles: dict[str, int] = {}
    others = itertools.count(len(ROLE_STYLES))
    for role, method in roles.items():
        key = role if figure.roles else getattr(by_name.get(method), "objective", method)
        own = ROLE_STYLES.get(key)
        styles[role] = own if own is not None and own not in styles.values() else next(others)
    return styles


def resolve_roles(figure: Figure, config: Mapping, runs: Mapping, model: str) -> dict[str, str] | None:
    """role -> method (run name) for ``figure`` on ``model`` under ``config``, or None when a role
    has no run of that model (a method limited to other models fills no role here).

    ``runs``: ``{(model, run name): Run}`` of ``fpa.config.expand_runs``.
    """
    if figure.enabled is not None and not figure.enabled(config):
        return None
    if figure.of_base:
        return {BASE_ROLE: BASE_ROLE}
    chosen = config["figures"].get(figure.name) or {}
    by_name = {name: run for (run_model, name), run in runs.items() if run_model == model}
    if not figure.roles:
        # a config may name the methods drawn (a swept method stands for its runs), else every
        # method trained on all the config's seeds (not one-seed tuning runs)
        named = set(chosen.values())
        every = {name: name for name, run in by_name.items()
                 if (not figure.uses_curves or run.training["snapshot_every"])
                 and (not figure.objectives or run.objective in figure.objectives)
                 and (name in named or run.method in named if named
                      else set(config["seeds"]) <= set(run.seeds))}
        return every if every and (config["curve_benchmarks"] or not figure.uses_curves) else None
    roles = {}
    for role in figure.roles:
        if role in chosen:
            roles[role] = chosen[role] if chosen[role] in by_name else None
        elif role in by_name and by_name[role].objective == role:
            roles[role] = role
        else:
            roles[role] = next((name for name, run in by_name.items() if run.objective == role), None)
    if None in roles.values():
        return None
    if figure.uses_curves and not (config["curve_benchmarks"] and all(
            by_name[method].training["snapshot_every"] for method in roles.values())):
        return None
    return roles


def figure_slice(figure: Figure, config: Mapping, runs: Mapping, model: str) -> dict | None:
    """What ``fpa figure`` is given for ``figure`` on ``model`` (None: not planned for this config)."""
    roles = resolve_roles(figure, config, runs, model)
    if roles is None:
        return None
    if figure.uses_evals and not config["tables"]:
        return None
    by_name = {name: run for (run_model, name), run in runs.items() if run_model == model}
    labels = {role: config["methods"].get(method, {}).get("label", method) if method != BASE_ROLE else "Base"
              for role, method in roles.items()}
    curve = config["curve_benchmarks"][0] if figure.uses_curves else None
    benchmarks = table_benchmarks(next(iter(config["tables"].values()))) if figure.uses_evals else []
    lam = {role: float(by_name[method].params.get("lam", 0.0)) if method in by_name else 0.0
           for role, method in roles.items()}
    # the seeds every drawn run has (a sweep, or a model's runs, may train on fewer); the base model's
    # are the config's
    drawn = [by_name[method].seeds for method in roles.values() if method in by_name]
    seeds = [int(s) for s in (drawn[0] if drawn else config["seeds"]) if all(s in other for other in drawn)]
    if not seeds:
        return None
    # the run whose files hold each role's results (Run.trained_as); the base model's are its own
    files = {role: by_name[method].trained_as if method in by_name else method for role, method in roles.items()}
    stages = ({role: _stage_files(model, by_name[method]) for role, method in roles.items()}
              if figure.uses_stages else {})
    return {"model": model, "roles": roles, "files": files, "seeds": seeds, "labels": labels,
            "styles": style_indices(figure, roles, by_name), "curve_benchmark": curve, "base": curve is not None,
            "benchmarks": benchmarks, "lam": lam, "stages": stages}


def _stage_files(model: str, run) -> list[str]:
    """What ``run`` waits for before it trains: nothing online; offline its dataset, and the
    reference cache when its objective reads the reference (not for diagnostics only)."""
    from fpa.figures import paths
    from fpa.objectives import get_objective

    if run.online:
        return []
    needs_cache = run.training["reference"] == "cached" and get_objective(run.objective).needs_reference
    return [paths.dataset_path(model)] + ([paths.reference_path(model)] if needs_cache else [])


def figure_caption(figure: Figure, slice_: Mapping) -> str:
    """The figure's caption with the runs it draws (model, method per role, seeds), as the
    reStructuredText of the Snakemake report: the caption's and labels' own text stays literal."""
    runs = ", ".join(f"{rst_literal(slice_['labels'][role])} (``{method}``)"
                     for role, method in slice_["roles"].items())
    seeds = ", ".join(map(str, slice_["seeds"]))
    return f"{rst_literal(figure.caption)} Runs: model ``{slice_['model']}``; {runs}; seeds {seeds}."


def rst_literal(text: str) -> str:
    """``text`` with reStructuredText's inline markup characters escaped (π^(1/|y|) is not a
    substitution, A*-PO not an emphasis)."""
    return re.sub(r"([\\`*_|])", r"\\\1", text)


def planned_figures(config: Mapping, runs: Mapping) -> list[tuple[str, str]]:
    """(model, figure) pairs the config asks for and has the runs of."""
    return [(model, name) for model in config["models"] for name in config["figures"]
            if figure_slice(FIGURES[name], config, runs, model) is not None]


def planned_curves(config: Mapping, runs: Mapping) -> list[str]:
    """The curve CSVs the planned figures read: accuracy through training is evaluated for the runs a
    figure draws, not for every run that keeps snapshots (model selection reads its own benchmark)."""
    return sorted({path for model, name in planned_figures(config, runs)
                   for path in figure_inputs(name, figure_slice(FIGURES[name], config, runs, model)).curves_read()})


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
    )


def input_files(inputs: FigureInputs) -> list[str]:
    """Every file a figure reads."""
    evals = [paths for per_bench in inputs.evals.values() for paths in per_bench.values()]
    groups = (*inputs.metrics.values(), *inputs.curves.values(), inputs.base_curves, *evals,
              *inputs.analyses.values(), *inputs.stages.values())
    return list(dict.fromkeys(path for group in groups for path in group))


def dag_inputs(name: str, slice_: Mapping) -> list[str]:
    """The DAG outputs a figure reads: a training_metrics.csv is read from its run's checkpoint directory."""
    inputs = figure_inputs(name, slice_)
    metrics = {path for paths in inputs.metrics.values() for path in paths}
    return [path.rsplit("/", 1)[0] if path in metrics else path for path in input_files(inputs)]
