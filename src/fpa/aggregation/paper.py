"""The paper's published numbers (``config/paper_results.yaml``) and how far a run is from them.

The file holds, per table of the paper configs (our name), the paper's LaTeX ``label``, its
column keys (``fpa.aggregation.columns``: benchmarks and ``avg``; runs for ``models_by_run``;
training metrics for ``overhead``) and, per model, one line per row with the cells as printed,
space-separated: ``84.10``, ``84.10±0.92`` (mean ± sample std), ``-`` (not printed). ``units``
converts a column the paper prints in other units than ours: ``{peak_memory_mb: {scale:
953.67431640625, unit: GB}}`` reads its 96 as 96 GB = 96·10^9 bytes = 91,553 of our MiB.

A table with ``paper_results: <file>`` carries the paper's value of each of its cells
(``with_paper``); ``compare`` gives a filled cell's Δ and whether it falls within the run's own
seed spread of the paper's value (several seeds: |Δ| ≤ sample std + the paper's rounding) or,
with one seed, equals it to the paper's rounding (|Δ| ≤ half a unit of its last printed digit).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from pathlib import Path

import yaml

from fpa.aggregation.grid import Layout, PaperCell
from fpa.errors import ConfigError
from fpa.project import PROJECT_ROOT
from fpa.safe_load import LoadError, load_yaml

NOT_PRINTED = "-"
TABLE_KEYS = {"label", "columns", "models", "units", "note"}
SPREAD, ROUNDING = "seed spread", "rounding"


@dataclass(frozen=True)
class PaperTable:
    label: str
    columns: tuple[str, ...]
    cells: dict  # (model, row, column) -> (text, value, tolerance), units applied


def resolve(path: str | Path) -> Path:
    """``path`` as given, else relative to the workflow (as when run with -d elsewhere)."""
    path = Path(path)
    return path if path.is_absolute() or path.is_file() else PROJECT_ROOT / path


def load_paper_results(path: str | Path) -> dict[str, PaperTable]:
    """Every table of the file, checked; a malformed entry is a ConfigError naming file, key and line."""
    path = resolve(path)
    if not path.is_file():
        raise ConfigError(f"{path}: paper results file not found")
    stat = path.stat()
    return _load(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=None)
def _load(path: str, mtime_ns: int, size: int) -> dict[str, PaperTable]:
    """Parsed once per process and file version (config validation and common.smk both read it)."""
    try:
        data = load_yaml(path)
    except LoadError as error:
        raise ConfigError(str(error)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of table name -> table, got {type(data).__name__}")
    return {name: _table(path, name, spec) for name, spec in data.items()}


def _table(path: str, name: str, spec) -> PaperTable:
    if not isinstance(spec, dict) or set(spec) - TABLE_KEYS or not {"label", "columns", "models"} <= set(spec):
        got = sorted(spec) if isinstance(spec, dict) else spec
        _fail(path, [name], f"expected keys label, columns, models (and optionally units, note), got {got}")
    columns = spec["columns"]
    if not isinstance(columns, list) or len(set(columns)) != len(columns) or not columns:
        _fail(path, [name, "columns"], f"expected a list of distinct column keys, got {columns!r}")
    units = spec.get("units", {})
    for column, unit in units.items():
        if column not in columns:
            _fail(path, [name, "units"], f"{column!r} is not one of its columns {columns}")
        if not isinstance(unit, dict) or set(unit) != {"scale", "unit"} or not unit["scale"] > 0:
            _fail(path, [name, "units", column], f"expected {{scale: <number > 0>, unit: <name>}}, got {unit!r}")
    cells = {}
    for model, rows in spec["models"].items():
        for row, printed in rows.items():
            keys = [name, "models", model, row]
            if not isinstance(printed, str):
                _fail(path, keys, "expected the printed values as one string (quoted, so that '6.60' keeps its "
                      f"digits), got {printed!r}")
            values = printed.split()
            if len(values) != len(columns):
                _fail(path, keys, f"expected {len(columns)} values (columns {columns}), got {len(values)} in "
                      f"{printed!r}")
            for column, text in zip(columns, values):
                if text != NOT_PRINTED:
                    cells[(model, str(row), column)] = _value(text, units.get(column), path, keys + [column])
    return PaperTable(spec["label"], tuple(columns), cells)


def _fail(path: str, keys: list, message: str):
    """A ConfigError naming the file, the line and key path of the entry at ``keys``, and ``message``."""
    raise ConfigError(f"{path}:{_line(path, keys)}: {'.'.join(map(str, keys))}: {message}")


def _value(text: str, unit: dict | None, path: str, keys: list) -> tuple[str, float, float]:
    """(printed text, mean in our units, half a unit of the mean's last digit in our units) of
    ``84.10`` or ``84.10±0.92``; ``unit``: the column's {scale, unit} where the paper's units differ."""
    mean, _, std = text.partition("±")
    try:
        decimal = Decimal(mean)
        if std:
            Decimal(std)
    except InvalidOperation:
        _fail(path, keys, f"expected a number, number±std or {NOT_PRINTED!r}, got {text!r}")
    tolerance = 0.5 * 10.0 ** decimal.as_tuple().exponent
    scale, name = (unit["scale"], f" {unit['unit']}") if unit else (1, "")
    return (f"{mean} ± {std}" if std else mean) + name, float(decimal) * scale, tolerance * scale


def _line(path: str, keys: list) -> int:
    """The file line (1-based) of the entry at ``keys``, or of the deepest of them the file has."""
    node = yaml.compose(Path(path).read_text())
    for key in keys:
        children = dict((k.value, v) for k, v in node.value) if isinstance(node, yaml.MappingNode) else {}
        if str(key) not in children:
            break
        node = children[str(key)]
    return node.start_mark.line + 1


@dataclass(frozen=True)
class PaperSource:
    """What a table is compared with (``tables.<t>.paper_results``): the file, its table (None:
    the table's own name), its model (None: each row's own model) and our column -> its column
    (None: every column by its own key)."""

    file: str
    table: str | None = None
    model: str | None = None
    columns: dict | None = None

    @classmethod
    def of(cls, value) -> "PaperSource":
        """From the config's value: a file, or a mapping with ``file`` and optionally ``table``,
        ``model``, ``columns`` (the schema checks the shape)."""
        return cls(value) if isinstance(value, str) else cls(**value)

    @property
    def mapped(self) -> bool:
        """Compared with another table, model or columns than the table's own."""
        return (self.table, self.model, self.columns) != (None, None, None)


def with_paper(layout: Layout, value, where: str, known_rows: set, known_columns: set) -> Layout:
    """``layout`` carrying the paper's value of each of its cells that the paper prints (``value``:
    ``tables.<t>.paper_results``, see ``PaperSource``). Without a mapping, a row or column of the
    file that the table does not show is left out, and one that names nothing of the config
    (``known_rows``: (model, run, base or model); ``known_columns``) is a ConfigError; with one,
    only the rows the table shows and the mapped columns are compared, and a mapped name the file
    or the table lacks is a ConfigError."""
    source = PaperSource.of(value)
    tables = load_paper_results(source.file)
    name = source.table or layout.name
    if name not in tables:
        raise ConfigError(f"{where}.paper_results: {source.file} has no table {name!r}; expected one of "
                          f"{sorted(tables)}")
    table, file = tables[name], str(resolve(source.file))
    rows = [(row.model, row.key.removeprefix(f"{row.model}/"), row.key) for block in layout.blocks for row in block.rows]
    if not source.mapped:
        _check_names(file, name, table, layout, rows, known_rows, known_columns)
    columns = source.columns or {column: column for column in table.columns}
    for ours, theirs in columns.items():
        if ours not in layout.column_keys:
            raise ConfigError(f"{where}.paper_results.columns: {ours!r} is no column of the table; expected some of "
                              f"{list(layout.column_keys)}")
        if theirs not in table.columns:
            raise ConfigError(f"{where}.paper_results.columns.{ours}: {file} table {name!r} has no column "
                              f"{theirs!r}; expected one of {list(table.columns)}")
    if source.model is not None and source.model not in {model for model, _, _ in table.cells}:
        raise ConfigError(f"{where}.paper_results.model: {file} table {name!r} has no model {source.model!r}; "
                          f"expected one of {sorted({model for model, _, _ in table.cells})}")
    cells = []
    for model, row, key in rows:
        for ours, theirs in columns.items():
            printed = table.cells.get((source.model or model, row, theirs))
            if printed:
                cells.append(PaperCell(key, ours, *printed))
    return replace(layout, paper=tuple(cells), paper_label=table.label)


def _check_names(file: str, name: str, table: PaperTable, layout: Layout, rows: list, known_rows: set,
                 known_columns: set):
    """Every column and row of the file's table names something of the config."""
    unknown = [c for c in table.columns if c not in known_columns]
    if unknown:
        _fail(file, [name, "columns"], f"{unknown[0]!r} names no column of the config; expected some of "
              f"{list(layout.column_keys)}")
    for model, row, _ in table.cells:
        if (model, row.partition("@")[0]) not in known_rows:
            _fail(file, [name, "models", model, row], f"names no run of model {model!r} (nor base); "
                  f"the table's rows: {sorted(r for m, r, _ in rows if m == model)}")


def compare(mean: float, std: float, n_seeds: int, paper: PaperCell) -> dict:
    """Δ = ours − paper (both as printed in the table's units), and whether ours is within: the
    seed spread (|Δ| ≤ std + the paper's rounding) with several seeds, the rounding with one."""
    delta = mean - paper.value
    spread = n_seeds > 1 and not math.isnan(std)
    bound = (std if spread else 0.0) + paper.tolerance
    # 1e-9: a value equal to the printed one up to float noise (0.7552 * 100) counts as equal
    return {"paper": paper.value, "paper_text": paper.text, "delta": delta,
            "basis": SPREAD if spread else ROUNDING, "within": abs(delta) <= bound + 1e-9}
