"""A plan's figures, and the helpers of ``workflow/rules/figures.smk``: which figures a config plans,
each one's slice of the config (the roles its runs fill, their labels, styles and seeds; ``fpa figure``
is given it), the DAG files it reads and its caption, computed once per (model, figure) rather than
once per use.

    plan = judge(["config/config.yaml"])
    plan.figures.slice("toy", "training_dynamics")   # figure_slice(FIGURES[name], plan.config, plan.runs, "toy")
    # {"model": "toy", "roles": {"offrl": "offrl", "fpa": "fpa"}, "seeds": [...], ...} or None
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Mapping

from fpa import paths
from fpa.aggregation.layout import table_benchmarks
from fpa.errors import ConfigError
from fpa.figures import BASE_ROLE, FIGURES, ROLE_STYLES, Figure
from fpa.figures.inputs import figure_inputs, input_files
from fpa.planning.stage import NOTHING, Stage, as_json
from fpa.provenance.fingerprint import code_fingerprint

FIGURE_FORMATS = ("png", "pdf")
FIGURE_TABLE_FORMATS = ("csv", "md", "html")


class FigureStage(Stage):
    """One figure (and its table, for a figure that has one) per (model, figure) the config asks for
    and has the runs of."""

    def __init__(self, plan):
        super().__init__(plan)
        self._planned = planned_figures(self.config, plan.runs)

    def planned(self) -> list[tuple[str, str]]:
        """(model, figure) pairs the config asks for and has the runs of."""
        return self._planned

    @functools.cache
    def slice(self, model: str, name: str) -> dict | None:
        return figure_slice(FIGURES[name], self.config, self.plan.runs, model)

    @functools.cache
    def dag_inputs(self, model: str, name: str) -> list[str]:
        return dag_inputs(name, self.slice(model, name))

    def every_input(self) -> list[str]:
        """What the planned figures read, each figure's in turn."""
        return [path for model, name in self._planned for path in self.dag_inputs(model, name)]

    def curves(self) -> list[str]:
        return planned_curves(self.config, self.plan.runs)

    def outputs(self) -> list[str]:
        """Each planned figure, and the table of those that have one (Figure.table)."""
        return [paths.FIGURE[ext].format(experiment=self.config["experiment"], model=model, figure=name)
                for model, name in self._planned
                for ext in FIGURE_FORMATS + (FIGURE_TABLE_FORMATS if FIGURES[name].table else ())]

    def inputs(self, wildcards) -> list[str]:
        return self.dag_inputs(wildcards.model, wildcards.figure)

    def caption(self, wildcards) -> str:
        return figure_caption(FIGURES[wildcards.figure], self.slice(wildcards.model, wildcards.figure))

    def config_json(self, wildcards) -> str:
        return as_json(self.slice(wildcards.model, wildcards.figure))

    def code(self, wildcards) -> str:
        return code_fingerprint("fpa.cli.figure", FIGURES.module_of(wildcards.figure))

    @staticmethod
    def table_pattern() -> str:
        """The figures that have a table (Figure.table)."""
        return "|".join(name for name, figure in FIGURES.items() if figure.table) or NOTHING


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

    ``runs``: ``{(model, run name): Run}`` of ``fpa.config.runs.expand_runs``.
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
            "curve_label": config["benchmarks"][curve].get("label", curve) if curve else None,
            "benchmarks": benchmarks, "lam": lam, "stages": stages}


def _stage_files(model: str, run) -> list[str]:
    """What ``run`` waits for before it trains: nothing online; offline its dataset, and the
    reference cache when its objective reads the reference (not for diagnostics only)."""
    from fpa.objectives import get_objective

    if run.online:
        return []
    needs_cache = run.training["reference"] == "cached" and get_objective(run.objective).needs_reference
    return [paths.TRAIN_SPLIT.format(model=model)] + ([paths.REFERENCE_CACHE.format(model=model)] if needs_cache
                                                      else [])


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


def check_snapshot_steps(config: Mapping, runs: Mapping, planned: list[tuple[str, str]], where: str) -> None:
    """The future-policy analysis reads its run's snapshots at ``future_policy.anchor_step`` and
    ``target_steps``: each a step at which the run takes one (a multiple of its snapshot_every)."""
    from fpa.figures.future_policy_validation import FIGURES, ROLE

    (figure,) = FIGURES
    settings = config["future_policy"]
    for model, name in planned:
        if name != figure.name:
            continue
        run = runs[(model, figure_slice(figure, config, runs, model)["roles"][ROLE])]
        every = run.training["snapshot_every"]
        for key, step in [("anchor_step", settings["anchor_step"]), *(("target_steps", s) for s in settings["target_steps"])]:
            if not every or step % every:
                raise ConfigError(f"{where}: future_policy.{key}: run {run.name!r} of model {model!r} takes a snapshot "
                                  f"every {every} steps (training.snapshot_every, 0: none); expected a multiple of "
                                  f"it, got {step}")


def planned_curves(config: Mapping, runs: Mapping) -> list[str]:
    """The curve CSVs the planned figures read: accuracy through training is evaluated for the runs a
    figure draws, not for every run that keeps snapshots (model selection reads its own benchmark)."""
    return sorted({path for model, name in planned_figures(config, runs)
                   for path in figure_inputs(name, figure_slice(FIGURES[name], config, runs, model)).curves_read()})


def dag_inputs(name: str, slice_: Mapping) -> list[str]:
    """The DAG outputs a figure reads: a training_metrics.csv is read from its run's checkpoint directory."""
    inputs = figure_inputs(name, slice_)
    metrics = {path for paths in inputs.metrics.values() for path in paths}
    return [path.rsplit("/", 1)[0] if path in metrics else path for path in input_files(inputs)]
