"""Table layouts from config (``tables.<name>``): which rows, which columns, in which blocks,
with which marks. Pure planning: the Snakefile builds a layout to know which evaluation files
a table reads, and ``fpa aggregate`` fills the same layout with numbers.

Two shapes cover the paper's tables:

- ``runs``: a row per run (methods, sweep members, the base), a column per benchmark and
  Avg. — the main, ablation, λ (test), tuning, three-seed, Step-DPO and code tables;
- ``models_by_run``: a row per model, a column per run, one benchmark — the paper's
  validation-split λ table;
- ``overhead``: a row per run with its training throughput and peak memory, and each row's
  ratio to the first — the paper's "Computational overhead of FPA" table.

Every cell names the (model, method, benchmark, seeds, metric) evaluations it reads (several
for Avg.); a method may train on fewer models or seeds than the config (``methods.<m>.models``,
``seeds``), and its cells read exactly those. A table reads every seed of a run (``seeds: mean``,
mean ± sample std; ``each``: the seeds as rows below) or only the seeds it lists (``seeds: [42]``,
as the paper's single-seed tables). With ``paper_results`` the layout carries the paper's values
of its cells (``fpa.aggregation.paper``).
"""

from __future__ import annotations

from typing import Mapping

from fpa.aggregation.columns import AVG_KEY, column_bench, parse_column
from fpa.aggregation.grid import BASE_METHOD, Block, CellKey, Layout, Row
from fpa.errors import ConfigError

AVG = "Avg."
BASE_LABEL = "Base"
# the overhead table's columns: training-summary field -> header (the paper's arrows)
OVERHEAD_COLUMNS = {"examples_per_s": "Throughput (examples/s) ↑", "tokens_per_s": "Tokens/s ↑",
                    "peak_memory_mb": "Peak memory (MB) ↓"}
# how a swept setting reads in a row label (the paper's "λ = 2", "β = 0.1", "η = 5e-6")
SYMBOLS = {"lam": "λ", "beta": "β", "alpha": "α", "tau": "τ", "lr": "η", "beta1": "β1", "beta2": "β2",
           "lam_dpop": "λ_DPOP", "lam_w": "λ_w", "lam_l": "λ_l", "reward_incorrect": "R_incorrect"}


def _symbol(key: str) -> str:
    """The display symbol of a swept setting; tied settings ("lam_w=lam_l") read "λ_w=λ_l"."""
    return "=".join(SYMBOLS.get(part, part) for part in key.split("="))


def normalise_table(spec) -> dict:
    """A table's config with every default filled (a plain list is its columns): the schema's
    ``$defs.table`` defaults (tests/test_defaults_once.py ties them)."""
    spec = {"columns": list(spec)} if isinstance(spec, list) else dict(spec)
    spec.setdefault("columns", [])
    defaults = {"layout": "runs", "column_labels": {}, "average": True, "group_by": "model", "highlight": [],
                "mark_best": True, "dagger_from": [], "seeds": "mean"}
    return {**defaults, **spec}


def table_benchmarks(spec) -> list[str]:
    """The benchmarks a table evaluates."""
    spec = normalise_table(spec)
    if spec["layout"] == "overhead":
        return []
    if spec["layout"] == "models_by_run":
        return [spec["benchmark"]]
    return list(dict.fromkeys(map(column_bench, spec["columns"])))


def _run_label(config: Mapping, run) -> str:
    """methods.<m>.label, else for a sweep member '<symbol> = <value>', else the run name."""
    if run is None:
        return BASE_LABEL
    if run.point:
        return ", ".join(f"{_symbol(key)} = {value:g}" if isinstance(value, (int, float))
                         else f"{_symbol(key)} = {value}" for key, value in run.point.items())
    return config["methods"][run.method].get("label", run.name)


def _row_entries(spec: dict, config: Mapping, model: str, by_name: Mapping, where: str) -> list[tuple]:
    """(entry name, [run names], entry options) for each configured row on ``model``, sweeps expanded."""
    if "rows" in spec:
        entries = [{"run": e} if isinstance(e, str) else e for e in spec["rows"]]
    else:
        entries = ([{"run": BASE_METHOD}] if config["evaluate_base"] else []) + [{"run": m} for m in config["methods"]]
    out = []
    for entry in entries:
        name = entry["run"]
        members = [r for r in by_name if by_name[r].method == name and by_name[r].point]
        if name == BASE_METHOD or name in by_name:
            out.append((name, [name], entry))
        elif members:
            out.append((name, members, entry))
        else:
            raise ConfigError(f"{where}.rows: {name!r} names no run of model {model!r}; expected base, a run or a "
                              f"swept method of {sorted(set(by_name) | {r.method for r in by_name.values()})}")
    return out


def _cells(model: str, method: str, seeds: tuple[int, ...], columns: list,
           average: bool) -> tuple[tuple[CellKey, ...], ...]:
    cells = tuple((CellKey(model, method, c.bench, seeds, c.metric),) for c in columns)
    return cells + ((tuple(key for (key,) in cells),) if average else ())


def _files_of(by_name: Mapping, name: str) -> str:
    """The run whose files hold ``name``'s results (``Run.trained_as``); the base model's are its own."""
    return by_name[name].trained_as if name in by_name else name


def _seeds(spec: dict, config: Mapping, run, model: str, where: str) -> tuple[int, ...]:
    """The seeds a cell of ``run`` (None: the base model) reads: all of the run's, or the table's list."""
    trained = tuple(run.seeds) if run is not None else tuple(config["seeds"])
    if not isinstance(spec["seeds"], list):
        return trained
    missing = [seed for seed in spec["seeds"] if seed not in trained]
    if missing:
        raise ConfigError(f"{where}.seeds: run {run.name if run else BASE_METHOD!r} of model {model!r} has seeds "
                          f"{list(trained)}; expected {missing[0]} among them")
    return tuple(spec["seeds"])


def _entry_rows(spec: dict, config: Mapping, model: str, by_name: Mapping, entry: tuple, prefix: str,
                dagger_rows: set, where: str) -> list[Row]:
    """The rows of one configured row entry on ``model``: its run(s), then their seeds if asked."""
    name, members, options = entry
    swept = members != [name]
    rows = []
    for member in members:
        run = by_name.get(member)
        label = options["label"] if "label" in options and not swept else _run_label(config, run)
        seeds = _seeds(spec, config, run, model, where)
        row = Row(prefix + member, label, _cells(model, _files_of(by_name, member), seeds, spec["parsed_columns"],
                                                 spec["average"]),
                  indent=options.get("indent", False) or swept,
                  highlight=member in spec["highlight"] or name in spec["highlight"],
                  dagger=(model, member) in dagger_rows, model=model)
        rows.append(row)
        if spec["seeds"] == "each":
            rows += [Row(f"{row.key}@{seed}", f"Seed {seed}", row.cells, indent=True, seed=seed, model=model)
                     for seed in seeds]
    return rows


def _sweep_title(config: Mapping, name: str, run) -> str:
    """'<method label> — <swept settings>', the head of a tuning-table block."""
    swept = ", ".join(_symbol(key) for key in run.point)
    return f"{config['methods'][name].get('label', name)} — {swept}"


def _model_blocks(spec: dict, config: Mapping, model: str, by_name: Mapping, entries: list, prefix: str,
                  dagger_rows: set, where: str) -> list[Block]:
    groups: list[tuple[str | None, list[Row]]] = []
    for entry in entries:
        rows = _entry_rows(spec, config, model, by_name, entry, prefix, dagger_rows, where)
        name, members, _ = entry
        if spec["group_by"] == "sweep" and members != [name]:
            groups.append((_sweep_title(config, name, by_name[members[0]]), rows))
        elif groups and groups[-1][0] is None:
            groups[-1][1].extend(rows)
        else:
            groups.append((None, rows))
    if spec["group_by"] == "sweep":
        return [Block(title, tuple(rows)) for title, rows in groups]
    title = model if spec["group_by"] == "model" and prefix else None
    return [Block(title, tuple(row for _, rows in groups for row in rows))]


def _dagger_rows(spec: dict, name: str, config: Mapping, runs: Mapping, models: list[str], where: str) -> set:
    """(model, run) trained exactly as a run of the ``dagger_from`` tables (objective, params, training)."""
    used = []
    for other in spec["dagger_from"]:
        if other not in config["tables"] or other == name:
            raise ConfigError(f"{where}.dagger_from: expected other tables of {sorted(config['tables'])}, "
                              f"got {other!r}")
        used += [(key.model, runs[(key.model, key.method)].config_slice())
                 for key in build_layout(other, config["tables"][other], config, runs).cell_keys()
                 if (key.model, key.method) in runs]
    # compared as values, so that a sweep's 1 equals a method's 1.0
    return {(model, run_name) for (model, run_name), run in runs.items()
            if model in models and (model, run.config_slice()) in used}


def _table_models(spec: dict, config: Mapping, where: str) -> list[str]:
    models = spec.get("models", list(config["models"]))
    unknown = [m for m in models if m not in config["models"]]
    if unknown:
        raise ConfigError(f"{where}.models: unknown model {unknown[0]!r}; expected some of {sorted(config['models'])}")
    return models


def _models_by_run(name: str, spec: dict, config: Mapping, runs: Mapping, models: list[str], where: str) -> Layout:
    """A row per model, a column per run, every cell on ``spec.benchmark``."""
    bench = spec.get("benchmark")
    if bench not in config["benchmarks"]:
        raise ConfigError(f"{where}.benchmark: expected one of {sorted(config['benchmarks'])}, got {bench!r}")
    rows = []
    trained = {run_name for (m, run_name) in runs if m in models}
    unknown = [c for c in spec["columns"] if c != BASE_METHOD and c not in trained]
    if unknown:
        raise ConfigError(f"{where}.columns: {unknown[0]!r} names no run of the table's models; expected some of "
                          f"{sorted(trained)}")
    for model in models:
        by_name = {run_name: run for (m, run_name), run in runs.items() if m == model}
        # a run of other models only (the paper's λ = 20 on one model) is an empty cell here
        cells = [(CellKey(model, _files_of(by_name, c), bench, _seeds(spec, config, by_name.get(c), model, where)),)
                 if c == BASE_METHOD or c in by_name else () for c in spec["columns"]]
        rows.append(Row(model, model, tuple(cells), model=model))
    by_name = {run_name: run for (m, run_name), run in runs.items() if m == models[0]}
    headers = _headers(spec, [(c, _run_label(config, by_name.get(c))) for c in spec["columns"]], where)
    return Layout(name, spec.get("caption", name), "Model", tuple(headers), (Block(None, tuple(rows)),),
                  spec["mark_best"], column_keys=tuple(spec["columns"]))


def _overhead(name: str, spec: dict, config: Mapping, runs: Mapping, models: list[str], where: str) -> Layout:
    """A row per run (rows of runs only) with its throughput and peak memory, then each later row's
    ratio to the first."""
    blocks = []
    for model in models:
        by_name = {run_name: run for (m, run_name), run in runs.items() if m == model}
        entries = _row_entries({**spec, "rows": spec.get("rows", list(config["methods"]))}, config, model, by_name,
                               where)
        prefix = f"{model}/" if len(models) > 1 else ""
        rows = [Row(prefix + member, options.get("label") or _run_label(config, by_name.get(member)),
                    tuple((CellKey(model, _files_of(by_name, member), metric,
                                   _seeds(spec, config, by_name.get(member), model, where)),)
                          for metric in OVERHEAD_COLUMNS), model=model)
                for entry, members, options in entries for member in members if member != BASE_METHOD]
        if not rows:
            raise ConfigError(f"{where}.rows: expected trained runs, got {spec.get('rows')}")
        ratios = [Row(f"{row.key}:ratio", f"{row.label} / {rows[0].label}", row.cells, ratio_to=rows[0].key,
                      model=model) for row in rows[1:]]
        blocks.append(Block(model if prefix else None, tuple(rows + ratios)))
    headers = _headers(spec, list(OVERHEAD_COLUMNS.items()), where)
    return Layout(name, spec.get("caption", name), "Method", tuple(headers), tuple(blocks), False, "training",
                  tuple(OVERHEAD_COLUMNS))


def _headers(spec: dict, columns: list[tuple[str, str]], where: str) -> list[str]:
    """Each column's header: its ``column_labels`` entry, else its own (``columns``: key, header); a
    ``column_labels`` key that is no column of the table (a typo) is refused, as an unknown highlight is."""
    keys = [key for key, _ in columns]
    unknown = [key for key in spec["column_labels"] if key not in keys]
    if unknown:
        raise ConfigError(f"{where}.column_labels: {unknown[0]!r} is not a column of the table; expected one of {keys}")
    return [spec["column_labels"].get(key) or header for key, header in columns]


def build_layout(name: str, spec, config: Mapping, runs: Mapping, where: str = "config") -> Layout:
    """The layout of table ``name`` (its config ``spec``) over the expanded ``runs``, with the paper's
    values of its cells when the table names ``paper_results``."""
    from fpa.aggregation.paper import with_paper

    spec = normalise_table(spec)
    where = f"{where}: tables.{name}"
    models = _table_models(spec, config, where)
    if spec["layout"] == "models_by_run":
        layout = _models_by_run(name, spec, config, runs, models, where)
    elif spec["layout"] == "overhead":
        layout = _overhead(name, spec, config, runs, models, where)
    else:
        layout = _runs(name, spec, config, runs, models, where)
    if not spec.get("paper_results"):
        return layout
    known_rows = set(runs) | {(model, name) for model in config["models"] for name in (BASE_METHOD, model)}
    known_columns = {*config["benchmarks"], AVG_KEY, *OVERHEAD_COLUMNS, *(name for _, name in runs),
                     *layout.column_keys}
    return with_paper(layout, spec["paper_results"], where, known_rows, known_columns)


def _runs(name: str, spec: dict, config: Mapping, runs: Mapping, models: list[str], where: str) -> Layout:
    """A row per run (blocks per model or per sweep), a column per benchmark metric, then Avg."""
    spec["parsed_columns"] = [parse_column(c, config, f"{where}.columns") for c in spec["columns"]]
    metrics = {c.metric for c in spec["parsed_columns"]}
    if spec["average"] and len(metrics) > 1:
        raise ConfigError(f"{where}.average: the columns mix metrics {sorted(metrics)}, which one Avg. cannot "
                          "average; expected average: false")
    dagger_rows = _dagger_rows(spec, name, config, runs, models, where)
    blocks = []
    for model in models:
        by_name = {run_name: run for (m, run_name), run in runs.items() if m == model}
        entries = _row_entries(spec, config, model, by_name, where)
        names = {entry for entry, _, _ in entries} | {member for _, members, _ in entries for member in members}
        unknown = [h for h in spec["highlight"] if h not in names]
        if unknown:
            raise ConfigError(f"{where}.highlight: {unknown[0]!r} is not a row of the table; "
                              f"expected one of {sorted(names)}")
        prefix = f"{model}/" if len(models) > 1 else ""
        blocks += _model_blocks(spec, config, model, by_name, entries, prefix, dagger_rows, where)
    headers = _headers(spec, [(c.key, c.header) for c in spec["parsed_columns"]], where)
    average = [AVG] if spec["average"] else []
    return Layout(name, spec.get("caption", name), "Method", tuple(headers + average), tuple(blocks),
                  spec["mark_best"], column_keys=tuple([c.key for c in spec["parsed_columns"]]
                                                       + [AVG_KEY] * bool(average)))
