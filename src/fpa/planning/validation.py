"""Config checks that need the registries above ``fpa.config``: figures, table layouts and
job resources, and the names that become path segments (and so shell words) of the DAG.

``fpa.config.validate_config`` checks the schema and the run grid; the checks here import
``fpa.figures``, ``fpa.aggregation.layout`` and ``fpa.resources``, which import
``fpa.config``, so they sit in a module above all of them and no import circle forms.
"""

from __future__ import annotations

from typing import Mapping

from fpa.aggregation.layout import Layout, build_layout
from fpa.config.runs import expand_runs
from fpa.containment import SEGMENT, check_name
from fpa.errors import ConfigError
from fpa.figures import FIGURES
from fpa.resources import check_resources

#: a name of the config that becomes a path segment (a wildcard of the DAG): ``fpa.containment``'s
NAME = SEGMENT
#: the config's sections whose keys are such names, and its single name (``experiment``)
NAMED_SECTIONS = ("models", "benchmarks", "tables")


def check_planning(config: Mapping, where: str, runs: Mapping | None = None) -> dict[str, Layout]:
    """What a config valid for ``fpa.config`` must also satisfy for the DAG to be planned; returns
    each table's layout (``runs``: the config's expanded runs, when the caller has them)."""
    check_names(config, where)
    check_resources(config, where)
    _check_figures(config, where)
    runs = expand_runs(config, where) if runs is None else runs
    return {name: build_layout(name, spec, config, runs, where) for name, spec in config["tables"].items()}


def check_names(config: Mapping, where: str) -> None:
    """Names that become path segments are one segment each (``fpa.containment.check_name``), as the
    workflow's wildcards take them."""
    named = {f"{section}.{key}": key for section in NAMED_SECTIONS for key in config[section]}
    named["experiment"] = config["experiment"]
    for key_path, name in named.items():
        check_name(name, f"{where}: {key_path}")


def _check_figures(config: Mapping, where: str) -> None:
    if not config["methods"]:  # the Base row alone: nothing that draws trained runs
        of_runs = [f"figures.{name}" for name in config["figures"] if name in FIGURES and not FIGURES[name].of_base]
        of_runs += [key for key in ("curve_benchmarks", "model_selection") if config[key]]
        if of_runs:
            raise ConfigError(f"{where}: methods: expected at least one method for {', '.join(of_runs)} (they "
                              "draw trained runs), got {} (the Base row alone)")
    for name, roles in config["figures"].items():
        if name not in FIGURES:
            raise ConfigError(f"{where}: figures: unknown figure {name!r}; expected one of {sorted(FIGURES)}")
        for role, method in roles.items():
            if FIGURES[name].roles and role not in FIGURES[name].roles:
                raise ConfigError(f"{where}: figures.{name}.{role}: unknown role; expected one of "
                                  f"{list(FIGURES[name].roles)}")
            if method not in config["methods"]:
                raise ConfigError(f"{where}: figures.{name}.{role}: unknown method {method!r}; "
                                  f"expected one of {sorted(config['methods'])}")
