"""``fpa explain TABLE --row ROW --col COLUMN``: the chain behind one table cell.

From the table's sidecar to the evaluation files the cell averages, and from each
back through checkpoint → training config → dataset → generation config → base
model, verifying at every step that the file on disk still has the sha256 that was
recorded when it was produced and when it was consumed. The row is named as the
table prints it (``FPA``) or by its run (``fpa``); the values are in the table's unit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from fpa.io import sha256_path
from fpa.provenance.record import RECORD_FIELDS, read_record

# the fields of a record shown on its own line; every other standard field is its environment
CHAIN_FIELDS = frozenset({"rule", "output", "config", "inputs", "code_fingerprint", "project", "started",
                          "finished", "command", "usage"})
SHORT = 160  # characters of a config shown on one line, unless the whole is asked for


@dataclass
class Explanation:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)


@dataclass
class _Walk:
    whole: bool  # print configs and recorded values whole
    environment: dict  # the environment printed last: a record's own is printed where it differs
    seen: set[str] = field(default_factory=set)
    out: Explanation = field(default_factory=Explanation)

    def show(self, value: object) -> str:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"))
        return text if self.whole or len(text) <= SHORT else text[: SHORT - 3] + "... (--whole: all of it)"


def cpu_summary(record: dict) -> str:
    """The CPU and math libraries a job ran with, and its numerics pin, in one line (records written
    before provenance named the CPU say so)."""
    cpu, pin = record.get("cpu"), record.get("numerics") or {}
    if cpu is None:
        return "not recorded"
    text = f"{cpu['vendor']} {cpu['model']} ({' '.join(cpu['flags']) or 'no AVX'})"
    libraries = cpu.get("libraries")
    if libraries is not None:
        text += (f"; torch {libraries['torch']} (ATen {libraries['aten_cpu_capability']}), MKL {libraries['mkl']}, "
                 f"oneDNN {libraries['onednn']}")
    return text + f"; MKL_CBWR={pin.get('MKL_CBWR') or 'unset'}"


def environment_of(record: dict) -> dict:
    """What a record says of the machine and software that produced it (packages, CPU, numerics,
    host, and any such field a newer record has)."""
    return {key: record[key] for key in sorted(RECORD_FIELDS - CHAIN_FIELDS) if key in record}


def _environment_lines(record: dict, walk: _Walk, indent: str) -> list[str]:
    environment = environment_of(record)
    changed = {key: value for key, value in environment.items() if walk.environment.get(key) != value}
    walk.environment = {**walk.environment, **environment}
    return [f"{indent}  {key}: {cpu_summary(record) if key == 'cpu' else walk.show(value)}"
            for key, value in changed.items()]


def _walk(path: str, expected_sha: str | None, depth: int, walk: _Walk) -> None:
    indent, out = "  " * depth, walk.out
    if not Path(path).exists():
        out.problems.append(f"{path}: missing")
        out.lines.append(f"{indent}{path}  MISSING")
        return
    actual = sha256_path(path)
    record = read_record(path)
    status = "sha256 ok"
    if expected_sha is not None and expected_sha != actual:
        status = "SHA256 MISMATCH (changed since it was consumed)"
        out.problems.append(f"{path}: sha256 {actual[:12]} != recorded input {expected_sha[:12]}")
    if record is not None and record["output"]["sha256"] != actual:
        status = "SHA256 MISMATCH (changed since it was produced)"
        out.problems.append(f"{path}: sha256 {actual[:12]} != recorded output {record['output']['sha256'][:12]}")
    if status == "sha256 ok":
        out.verified.append(path)
    if record is None:
        out.lines.append(f"{indent}{path}  [{status}; external input, no provenance record]")
        return
    if path in walk.seen:
        out.lines.append(f"{indent}{path}  [{status}; rule {record['rule']}, see above]")
        return
    walk.seen.add(path)
    project = record["project"]
    out.lines.append(
        f"{indent}{path}  [{status}; rule {record['rule']}; commit {project['commit'][:12]}"
        f"{'-dirty' if project.get('dirty') else ''}; code {record.get('code_fingerprint')}; "
        f"finished {record['finished']}]"
    )
    out.lines.append(f"{indent}  config: {walk.show(record['config'])}")
    out.lines += _environment_lines(record, walk, indent)
    for key in sorted(set(record) - RECORD_FIELDS):  # what the job itself recorded, e.g. a selection
        out.lines.append(f"{indent}  {key}: {walk.show(record[key])}")
    for name, spec in record["inputs"].items():
        out.lines.append(f"{indent}  <- {name}:")
        _walk(spec["path"], spec["sha256"], depth + 2, walk)


def find_row(cells: dict, row: str, table: str | Path) -> str:
    """The run key of ``row``: the label as the table prints it (any case), or the key itself."""
    if row in cells:
        return row
    by_label = {next(iter(columns.values())).get("label", key).casefold(): key for key, columns in cells.items()}
    wanted = row.replace("†", "").strip().casefold()
    matches = {key for label, key in by_label.items() if label.replace("†", "").strip() == wanted}
    if len(matches) == 1:
        return matches.pop()
    labels = [next(iter(columns.values())).get("label", key) for key, columns in cells.items()]
    raise ValueError(f"{table}: unknown row {row!r}; expected a row as the table prints it, one of {labels} "
                     f"(or its run: {sorted(cells)})")


def _value(source: dict, cell: dict) -> str:
    scale = cell.get("scale", 1)
    return f"{scale * source['value']:.2f}" + (" %" if scale == 100 else "")


def explain_cell(table: str | Path, row: str, col: str, *, whole: bool = False) -> Explanation:
    record = read_record(table)
    if record is None:
        raise ValueError(f"{table}: no provenance record ({table}.prov.json)")
    cells = record["cells"]
    key = find_row(cells, row, table)
    if col not in cells[key]:
        raise ValueError(f"{table}: unknown column {col!r}; expected one of {sorted(cells[key])}")
    cell = cells[key][col]
    walk = _Walk(whole, environment={})
    _walk(str(table), None, 0, walk)
    runs = len(cell["sources"])
    summary = f"mean ± sample std over {runs} seeds" if runs > 1 else f"one run, seed {cell['sources'][0]['seed']}"
    out = walk.out
    # of the whole table's chain, its own line and environment; the cell's chain follows
    head = out.lines[:2 + len(environment_of(record))]
    out.lines = [f"{table}: row {cell.get('label', key)!r} (run {key}), column {col!r} = {cell['text']}  "
                 f"({summary})", *[line for line in head if not line.lstrip().startswith("config:")]]
    walk.seen = set()
    walk.environment = environment_of(record)
    for source in cell["sources"]:
        out.lines.append(f"  seed {source['seed']}: {_value(source, cell)}")
        for path in source["files"]:
            _walk(path, source["sha256"][path], 2, walk)
    # a file behind several evaluations (the base model, the dataset) is checked once per path to it
    out.problems, out.verified = list(dict.fromkeys(out.problems)), list(dict.fromkeys(out.verified))
    return out
