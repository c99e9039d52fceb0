"""Config checks that need the registries above ``fpa.config``: figures, table layouts and
job resources, and the names that become path segments (and so shell words) of the DAG.

``fpa.config.check_config`` checks the schema and builds the run grid; the checks here import
``fpa.figures``, ``fpa.aggregation.layout`` and ``fpa.resources``, which import
``fpa.config``, so they sit in a module above all of them and no import circle forms.
"""

from __future__ import annotations

from typing import Mapping

from fpa.aggregation.layout import Layout, build_layout
from fpa.config.wildcards import check_wildcard_value
from fpa.containment import SEGMENT, check_name
from fpa.errors import ConfigError
from fpa.figures import FIGURES
from fpa.labels import label_identity
from fpa.planning.reference import check_reference_cache
from fpa.resources import check_resources

#: a name of the config that becomes a path segment (a wildcard of the DAG): ``fpa.containment``'s
NAME = SEGMENT
#: the config's sections whose keys are such names, and its single name (``experiment``), by the
#: wildcard of the rules' path templates they fill (the runs fill ``method``: ``fpa.config.runs``)
NAMED_SECTIONS = {"models": "model", "benchmarks": "bench", "tables": "table"}
EXPERIMENT = "experiment"


def check_planning(config: Mapping, where: str, runs: Mapping) -> dict[str, Layout]:
    """What a config valid for ``fpa.config`` must also satisfy for the DAG to be planned; returns
    each table's layout (``runs``: the config's run grid, ``fpa.config.check_config``'s)."""
    check_names(config, where)
    check_resources(config, where, runs)
    check_reference_cache(config, runs, where)
    _check_figures(config, where)
    layouts = {name: build_layout(name, spec, config, runs, where) for name, spec in config["tables"].items()}
    for name, layout in layouts.items():
        check_labels(layout, f"{where}: tables.{name}")
    return layouts


def check_labels(layout: Layout, where: str) -> None:
    """Each row and column of a table is listed once (its results fill one entry of the table's JSON,
    keyed by it), and a reader tells a block's rows apart by their labels (a per-seed row by the run
    above it) and the columns by their headers, as ``fpa.labels.label_identity`` reads them: two alike
    are refused, naming both, as is a label that reads as another row's or column's key (``fpa explain
    --row`` and ``--col`` take either)."""
    row_keys = [row.key for block in layout.blocks for row in block.rows]
    column_keys = list(layout.column_keys or layout.columns)
    _listed_once(row_keys, "row", where)
    _listed_once(column_keys, "column", where)
    for block in layout.blocks:
        labelled = [(row.key, row.label) for row in block.rows if row.seed is None]
        _first_alike(labelled, "rows", "labelled",
                     "a distinct label per row of a block (methods.<m>.label, a label in rows, or group_by: sweep)",
                     where)
    headed = list(zip(column_keys, layout.columns))
    _first_alike(headed, "columns", "headed", "a distinct header per column (benchmarks.<b>.label, or column_labels)",
                 where)
    _label_as_key([(row.key, row.label) for block in layout.blocks for row in block.rows if row.seed is None],
                  row_keys, "row", "labelled", where)
    _label_as_key(headed, column_keys, "column", "headed", where)


def _listed_once(keys: list[str], what: str, where: str) -> None:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            raise ConfigError(f"{where}: the {what} {key!r} is listed twice; expected each {what} once")
        seen.add(key)


def _quoted(text: str, other: str) -> str:
    """``text`` as a message quotes it: every non-ASCII character escaped where it differs from
    ``other`` only by what a reader does not see."""
    return ascii(text) if text != other else repr(text)


def _first_alike(named: list[tuple[str, str]], what: str, verb: str, expected: str, where: str) -> None:
    """``ConfigError`` for the first two of ``named`` (key, text) whose texts a reader cannot tell apart."""
    seen: dict[str, tuple[str, str]] = {}
    for key, text in named:
        first, first_text = seen.setdefault(label_identity(text), (key, text))
        if first == key:
            continue
        if first_text == text:
            raise ConfigError(f"{where}: {what} {first!r} and {key!r} are both {verb} {text!r}; expected {expected}")
        raise ConfigError(f"{where}: {what} {first!r} and {key!r} are {verb} {_quoted(first_text, text)} and "
                          f"{_quoted(text, first_text)}, which read alike (same text once Unicode-normalised (NFKC), "
                          f"case-folded, invisible characters removed); expected {expected}")


def _label_as_key(named: list[tuple[str, str]], keys: list[str], what: str, verb: str, where: str) -> None:
    """``ConfigError`` for the first of ``named`` (key, text) whose text reads as another of ``keys``."""
    by_identity = {label_identity(key): key for key in keys}
    for key, text in named:
        other = by_identity.get(label_identity(text))
        if other is not None and other != key:
            raise ConfigError(f"{where}: the {what} {key!r} is {verb} {text!r}, which reads as the {what} {other!r}; "
                              f"expected a label that names no other {what} (fpa explain takes either)")


def check_names(config: Mapping, where: str) -> None:
    """Names that become path segments are one segment each (``fpa.containment.check_name``), as the
    workflow's wildcards take them, and fit every consumer of the wildcard they fill (``fpa.config.wildcards``)."""
    named = {f"{section}.{key}": (key, wildcard) for section, wildcard in NAMED_SECTIONS.items()
             for key in config[section]}
    named[EXPERIMENT] = (config[EXPERIMENT], EXPERIMENT)
    for key_path, (name, wildcard) in named.items():
        check_name(name, f"{where}: {key_path}")
        check_wildcard_value(name, wildcard, f"{where}: {key_path}")


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
