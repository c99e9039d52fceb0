"""``fpa explain TABLE --row ROW --col COLUMN``: the chain behind one table cell.

From the table's sidecar to the evaluation files the cell averages, and from each
back through checkpoint → training config → dataset → generation config → base
model, verifying at every step that the file on disk still has the sha256 that was
recorded when it was produced and when it was consumed, and that each record is the record
of the file it sits beside (a copied or moved file and sidecar describe another file). The row
is named as the table prints it (``FPA``) or by its run (``fpa``), the column as printed or by
its key; the values are in the table's unit.

Records name their files as their jobs did, relative to the workflow's directory; that
directory is found from the table named (``workdir_of``), so explain runs from any directory.

Every file of the chain has its record, but for what the config names as an outside input
(``OUTSIDE_INPUTS``: a ``source: file`` benchmark's own file; the data mirror's files and the pinned
models come in through the records of rules fetch_data and fetch_model): a file without one (an
evaluation copied in, a deleted sidecar) breaks the chain behind it, and is a problem. The cell's own
chain is verified; the table's other inputs (other rows' evaluations) are checked for their sha256
only and their problems are notes, so a cell's chain holds while another row is re-run. Each
environment (packages, CPU, numerics, host) is printed once; a record that ran in another one than the
first names it by its number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from fpa.io import read_json, sha256_path
from fpa.labels import label_identity
from fpa.paths import BENCHMARK, TABLE, parse
from fpa.provenance.record import RECORD_FIELDS, describes, read_record, record_in, sidecar_of, workdir_of

# the fields of a record shown on its own line; every other standard field is its environment
CHAIN_FIELDS = frozenset({"rule", "output", "config", "inputs", "code_fingerprint", "project", "started",
                          "finished", "command", "usage"})
SHORT = 160  # characters of a config shown on one line, unless the whole is asked for
#: What explain takes: a table rule aggregate wrote (the cells are in the sidecars of its CSV,
#: Markdown, LaTeX and HTML, and in its JSON itself)
TABLE_FILES = TABLE["csv"].format(table="<name>") + " (or .md, .tex, .html, .json)"


#: The inputs the config names, which no job of the workflow writes and so have no record: (the rule that
#: reads one, its input's name) -> (the rule's output template, the config key, filled from its wildcards)
OUTSIDE_INPUTS = {("validate_benchmark", "file"): (BENCHMARK["file"], "benchmarks.{bench}.path")}


@dataclass
class Explanation:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # problems of the table's other cells


@dataclass
class _Walk:
    whole: bool  # print configs and recorded values whole
    workdir: Path  # the directory the workflow ran in: recorded relative paths are relative to it
    facts: dict = field(default_factory=dict)  # (environment key, value) -> its number, printed once
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


def _environment_lines(record: dict, walk: _Walk, indent: str) -> tuple[list[str], list[str]]:
    """The lines of each environment fact of ``record`` printed for the first time (numbered), and the
    numbers of those printed before that are not the first of their key (the first goes unsaid)."""
    lines, others = [], []
    for key, value in environment_of(record).items():
        fact = (key, json.dumps(value, sort_keys=True))
        if fact in walk.facts:
            others += [f"{key} {walk.facts[fact]}"] if walk.facts[fact] != "#1" else []
            continue
        walk.facts[fact] = f"#{1 + sum(known == key for known, _ in walk.facts)}"
        shown = cpu_summary(record) if key == "cpu" else walk.show(value)
        lines.append(f"{indent}  {key} {walk.facts[fact]}: {shown}" if walk.facts[fact] != "#1" else
                     f"{indent}  {key}: {shown}")
    return lines, others


def _file_status(path: str, expected_sha: str | None, walk: _Walk) -> tuple[str, dict | None, list[str]]:
    """``path``'s status, its record (None without one) and its problems: missing, a record of another
    file, a sha256 other than its consumer's (``expected_sha``) or its producer's record."""
    location = walk.workdir / path
    if not location.exists():
        return "MISSING", None, [f"{path}: missing"]
    record = read_record(location)
    if record is not None and not describes(record, location, walk.workdir):
        return f"RECORD OF ANOTHER FILE: {record['output']['path']}", None, [
            f"{path}: its record {sidecar_of(path)} describes {record['output']['path']}, not this file (a copied "
            "or moved file and record)"]
    actual, problems, status = sha256_path(location), [], "sha256 ok"
    if expected_sha is not None and expected_sha != actual:
        status = "SHA256 MISMATCH (changed since it was consumed)"
        problems.append(f"{path}: sha256 {actual[:12]} != recorded input {expected_sha[:12]}")
    if record is not None and record["output"]["sha256"] != actual:
        status = "SHA256 MISMATCH (changed since it was produced)"
        problems.append(f"{path}: sha256 {actual[:12]} != recorded output {record['output']['sha256'][:12]}")
    return status, record, problems


def _outside_key(consumer: tuple[dict, str] | None) -> str | None:
    """The config key that names the input ``consumer`` (its reader's record, the input's name) as an
    outside input, or None where the config names no such input."""
    if consumer is None:
        return None
    record, name = consumer
    template, key = OUTSIDE_INPUTS.get((record["rule"], name), (None, None))
    return None if template is None else key.format(**parse(template, record["output"]["path"]))


def _walk(path: str, expected_sha: str | None, depth: int, walk: _Walk, consumer: tuple[dict, str] | None = None,
          recurse: bool = True) -> None:
    """``path``'s line, its record's config and environment, then its inputs' chains (``recurse``: else its
    line and environment alone); ``consumer``: the record that reads it and the name of that input."""
    indent, out = "  " * depth, walk.out
    status, record, problems = _file_status(path, expected_sha, walk)
    out.problems += problems
    if record is None and status == "sha256 ok":
        outside = _outside_key(consumer)
        if outside is None:
            out.problems.append(f"{path}: no provenance record ({sidecar_of(path)}): the chain behind it is "
                                "broken (only an input the config names may have none)")
            status = "BROKEN CHAIN: no provenance record"
        else:
            status += f"; outside input named by the config's {outside}"
    if status.startswith("sha256 ok"):
        out.verified.append(path)
    if record is None:
        out.lines.append(f"{indent}{path}  [{status}]")
        return
    if path in walk.seen:
        out.lines.append(f"{indent}{path}  [{status}; rule {record['rule']}, see above]")
        return
    walk.seen.add(path)
    project = record["project"]
    environment, others = _environment_lines(record, walk, indent)
    out.lines.append(
        f"{indent}{path}  [{status}; rule {record['rule']}; commit {project['commit'][:12]}"
        f"{'-dirty' if project.get('dirty') else ''}; code {record.get('code_fingerprint')}; "
        f"finished {record['finished']}{''.join(f'; {other}' for other in others)}]"
    )
    if not recurse:  # the table: its line and environment (its cells and inputs are what follows)
        out.lines += environment
        return
    out.lines.append(f"{indent}  config: {walk.show(record['config'])}")
    out.lines += environment
    for key in sorted(set(record) - RECORD_FIELDS):  # what the job itself recorded, e.g. a selection
        out.lines.append(f"{indent}  {key}: {walk.show(record[key])}")
    for name, spec in record["inputs"].items():
        out.lines.append(f"{indent}  <- {name}:")
        _walk(spec["path"], spec["sha256"], depth + 2, walk, (record, name))


def _printed(name: str) -> str:
    """A row or column as a reader names it: without the dagger, as ``fpa.labels.label_identity`` reads it."""
    return label_identity(name.replace("†", ""))


def _pick(wanted: str, names: dict[str, str], table: str | Path, what: str, key: str, option: str) -> str:
    """The key of the row or column ``wanted``: the one whose key or name as the table prints it (any case,
    without the dagger, as a reader tells them apart) among ``names`` (key -> name as printed) reads as
    ``wanted``; two that do (a label that reads as another row's key, in a table written before the judge
    refused it) are ambiguous."""
    matches = [k for k, name in names.items() if _printed(wanted) in (_printed(k), _printed(name))]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ValueError(f"{table}: {what} {wanted!r} is ambiguous: the table prints it for the {key}s {matches}; "
                         f"name one by its {key}: {' or '.join(f'{option} {k}' for k in matches)}")
    raise ValueError(f"{table}: unknown {what} {wanted!r}; expected a {what} as the table prints it, one of "
                     f"{list(dict.fromkeys(names.values()))} (or its {key}: {sorted(names)})")


def find_row(cells: dict, row: str, table: str | Path) -> str:
    """The run key of ``row``: the label as the table prints it (any case), or the key itself."""
    labels = {key: next(iter(columns.values())).get("label", key) for key, columns in cells.items()}
    return _pick(row, labels, table, "row", "run", "--row")


def find_column(row_cells: dict, col: str, table: str | Path) -> str:
    """The key of column ``col`` in a row's cells: the header as the table prints it (any case), or its
    key (a record written before the cells were keyed by column key is keyed by header)."""
    headers = {key: cell.get("header", key) for key, cell in row_cells.items()}
    return _pick(col, headers, table, "column", "key", "--col")


def table_cells(table: str | Path, record: dict) -> dict:
    """The cells of a table: in the record of its CSV, Markdown, LaTeX or HTML, in its JSON itself."""
    if "cells" in record:
        return record["cells"]
    if record["rule"] == "aggregate":
        return read_json(table)["cells"]
    raise ValueError(f"{table} is an output of rule {record['rule']!r}, not a table: explain takes {TABLE_FILES}")


def _table_record(table: str | Path) -> tuple[dict, Path]:
    """The table's record and the directory its job ran in; a one-line refusal of a file that is no
    table's or whose record is another file's."""
    record = read_record(table)
    if record is None:
        held = record_in(Path(table))  # the table named is itself a sidecar
        if held is not None:
            raise ValueError(f"{table} is the provenance record of {held['output']['path']}, not a table: "
                             f"explain takes {TABLE_FILES}")
        raise ValueError(f"{table}: no provenance record ({sidecar_of(table)}); explain takes {TABLE_FILES}")
    workdir = workdir_of(record, table)
    if workdir is None:
        raise ValueError(f"{table}: its record {sidecar_of(table)} describes {record['output']['path']}, not this "
                         "file (a copied or moved file and record); explain the table where its job wrote it")
    return record, workdir


def _value(source: dict, cell: dict) -> str:
    scale = cell.get("scale", 1)
    return f"{scale * source['value']:.2f}" + (" %" if scale == 100 else "")


def explain_cell(table: str | Path, row: str, col: str, *, whole: bool = False) -> Explanation:
    record, workdir = _table_record(table)
    cells = table_cells(table, record)
    key = find_row(cells, row, table)
    column = find_column(cells[key], col, table)
    cell = cells[key][column]
    walk = _Walk(whole, workdir)
    runs = len(cell["sources"])
    summary = f"mean ± sample std over {runs} seeds" if runs > 1 else f"one run, seed {cell['sources'][0]['seed']}"
    walk.out.lines.append(f"{table}: row {cell.get('label', key)!r} (run {key}), column "
                          f"{cell.get('header', column)!r} = {cell['text']}  ({summary})")
    _walk(record["output"]["path"], None, 0, walk, recurse=False)
    mine = {path for source in cell["sources"] for path in source["files"]}
    for source in cell["sources"]:
        walk.out.lines.append(f"  seed {source['seed']}: {_value(source, cell)}")
        for path in source["files"]:
            _walk(path, source["sha256"][path], 2, walk, (record, path))
    walk.out.notes = _other_cells(record, mine, walk)
    # a file behind several evaluations (the base model, the dataset) is checked once per path to it
    out = walk.out
    out.problems, out.verified = list(dict.fromkeys(out.problems)), list(dict.fromkeys(out.verified))
    return out


def _other_cells(record: dict, mine: set[str], walk: _Walk) -> list[str]:
    """The problems of the table's inputs behind other cells (other rows' evaluations), each file checked
    against the table's record only: they are not this cell's chain."""
    notes = []
    for spec in record["inputs"].values():
        if spec["path"] not in mine:
            notes += _file_status(spec["path"], spec["sha256"], walk)[2]
    return notes
