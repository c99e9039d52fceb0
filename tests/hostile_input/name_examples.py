"""Names that collide or break later (issue 52), for the config fuzz (``config_examples``): one run name
made by two methods or sweep points, names at, one byte before and one byte past their limit
(``fpa.config.wildcards.name_limit``), names that end as a provenance record or a temporary does, tables named
as the workflow's own, periodic names, braces in a path Snakemake reads, rows or columns alike (issue 58:
as a reader sees them, or as another row's key) or of special characters, and column labels of no column.
``mutate_names`` does one of them to a config (the default one, or one mutated before)."""

from __future__ import annotations

import copy

from hypothesis import strategies as st

from fpa.config.runs import RUN_WILDCARD
from fpa.config.wildcards import PERIODIC_REPEATS, name_limit
from fpa.planning.validation import EXPERIMENT, NAMED_SECTIONS

#: where a name is added (``add_name``), by the wildcard of the rules' path templates it fills
NAME_PLACES = {"methods": RUN_WILDCARD, **NAMED_SECTIONS, EXPERIMENT: EXPERIMENT}
#: what a name may end in: the provenance record's suffix and parts of it, a temporary's, a plain one
RESERVED_ENDS = [".prov", ".prov.json", ".json.prov", ".jsonl.prov", ".tmp", ".json"]
NAME_CLASSES = ["duplicate_run", "limit", "reserved_end", "own_table", "periodic", "braces", "same_label"]


def filler_name(size: int) -> str:
    """A name of ``size`` bytes whose end repeats nothing (no periodic wildcard value): n0123456789101112..."""
    return ("n" + "".join(map(str, range(size))))[:size]


def add_name(config: dict, section: str, name: str) -> dict:
    """``config`` with one more entry ``name`` of ``section`` that its plan uses (a benchmark as a column
    of the first table, a method trained apart from the others), or ``name`` as the experiment; as it
    was where a mutation before left no such section."""
    entries = config.get(section)
    if section == EXPERIMENT:
        config[EXPERIMENT] = name
    elif not isinstance(entries, dict):
        return config
    elif section == "methods":
        entries[name] = {"objective": "offrl", "training": {"lr": 1.0e-4}}
    elif section == "tables":
        entries[name] = [bench for bench in config.get("benchmarks") or {} if isinstance(bench, str)][:1]
    else:
        entries[name] = copy.deepcopy(next(iter(entries.values()), {}))
        tables = config.get("tables")
        if section == "benchmarks" and isinstance(tables, dict) and tables and \
                isinstance(tables[first := next(iter(tables))], list):
            tables[first] = [*tables[first], name]
    return config


def mutate_names(draw, config: dict) -> str:
    """One of ``NAME_CLASSES`` done to ``config`` in place; its kind."""
    kind = draw(st.sampled_from(NAME_CLASSES))
    section = draw(st.sampled_from(sorted(NAME_PLACES)))
    if not isinstance(config, dict):
        return f"names_{kind}"
    if kind == "duplicate_run":
        _duplicate_run(draw, config)
    elif kind == "braces":
        path = draw(st.sampled_from(["{x}.jsonl", "data/{split}.jsonl", "a}b.jsonl", "no_brace.jsonl"]))
        add_name(config, "benchmarks", "mine")
        if isinstance(config.get("benchmarks"), dict):
            config["benchmarks"]["mine"] = {"source": "file", "path": path, "grader": "math"}
    elif kind == "same_label":
        _same_label(draw, config)
    elif kind == "own_table":  # the workflow's own tables, and one name past them
        add_name(config, "tables", draw(st.sampled_from(["cost_by_stage", "reproduction", "reproduction2"])))
    else:
        name = {"limit": lambda: filler_name(name_limit(NAME_PLACES[section]) + draw(st.sampled_from([-1, 0, 1]))),
                "reserved_end": lambda: filler_name(draw(st.integers(1, 12))) + draw(st.sampled_from(RESERVED_ENDS)),
                "periodic": lambda: filler_name(draw(st.integers(1, 6))) + "_" + draw(
                    st.sampled_from(["a", "ab", "x1", "abc"])) * (PERIODIC_REPEATS + draw(st.sampled_from([-1, 0, 1])))
                }[kind]()
        add_name(config, section, name)
    return f"names_{kind}"


def _entries(config: dict, section: str) -> dict:
    """The mappings of ``config[section]`` by their string keys ({} where a mutation left none)."""
    entries = config.get(section)
    return {key: value for key, value in entries.items() if isinstance(key, str) and isinstance(value, dict)} \
        if isinstance(entries, dict) else {}


def _duplicate_run(draw, config: dict) -> None:
    """A method swept over one learning rate (on the method or on a model), and a copy of it named as its
    run at that rate, or at another (no collision)."""
    methods = _entries(config, "methods")
    if not methods:
        return
    name = draw(st.sampled_from(sorted(methods)))
    models = _entries(config, "models")
    sweep = {"lr": [1.0e-4]}
    if models and draw(st.booleans()):
        next(iter(models.values()))["sweep"] = {name: sweep}
    else:
        methods[name]["sweep"] = sweep
    copied = {key: value for key, value in methods[name].items() if key not in ("sweep", "label")}
    config["methods"][f"{name}_lr{draw(st.sampled_from([1.0e-4, 2.0e-4]))}"] = copy.deepcopy(copied)


#: labels a row or column may take (issue 58): the default config's own and the base row's, look-alikes of
#: them (another case, NFD, a zero-width space or soft hyphen, full-width letters, a line break), run and
#: column keys, and labels of the characters each table format reserves
LABELS = ["FPA", "Off-RL", "Base", "Avg.", "toy8", "fpa", "offrl", "toy9", "off-rl", "F\u200bPA", "Off\u00adRL",
          "\uff26\uff30\uff21", "Ba\u0073\u0065\u0301", "Off-RL\n", "F|PA", "a\nb", "x^2 ~y", "50% & #1 $", "[x] *y*",
          "<b>FPA</b>", "\\FPA{}"]


def _same_label(draw, config: dict) -> None:
    """A method or benchmark labelled as another row or column (the base row's, Avg.) may be, or as one a
    reader cannot tell from it, or as a key; a label of special characters; a table that lists one column
    twice; a table's column_labels, of a column or not (a typo)."""
    section = draw(st.sampled_from(["methods", "benchmarks", "tables", "column_labels"]))
    entries = _entries(config, section) if section in ("methods", "benchmarks") else {}
    if entries:
        entries[draw(st.sampled_from(sorted(entries)))]["label"] = draw(st.sampled_from(LABELS))
    tables = config.get("tables")
    if section in ("tables", "column_labels") and isinstance(tables, dict) and tables and \
            isinstance(tables[first := next(iter(tables))], list):
        if section == "tables":
            tables[first] = [*tables[first], *tables[first][:1]]
        else:
            column = draw(st.sampled_from([*tables[first][:2], "toy99"]))
            tables[first] = {"columns": tables[first], "column_labels": {column: draw(st.sampled_from(LABELS))}}
