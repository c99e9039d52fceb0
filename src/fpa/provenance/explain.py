"""``fpa explain TABLE --row METHOD --col BENCH``: the chain behind one table cell.

From the table's sidecar to the evaluation files the cell averages, and from each
back through checkpoint → training config → dataset → generation config → base
model, verifying at every step that the file on disk still has the sha256 that was
recorded when it was produced and when it was consumed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from fpa.io import sha256_path
from fpa.provenance.record import RECORD_FIELDS, read_record


@dataclass
class Explanation:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    verified: list[str] = field(default_factory=list)


def _short(config: object, limit: int = 160) -> str:
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def _walk(path: str, expected_sha: str | None, depth: int, seen: set[str], out: Explanation) -> None:
    indent = "  " * depth
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
    if path in seen:
        out.lines.append(f"{indent}{path}  [{status}; rule {record['rule']}, see above]")
        return
    seen.add(path)
    project = record["project"]
    out.lines.append(
        f"{indent}{path}  [{status}; rule {record['rule']}; commit {project['commit'][:12]}"
        f"{'-dirty' if project.get('dirty') else ''}; code {record.get('code_fingerprint')}; "
        f"finished {record['finished']}]"
    )
    out.lines.append(f"{indent}  config: {_short(record['config'])}")
    out.lines.append(f"{indent}  cpu: {cpu_summary(record)}")
    for key in sorted(set(record) - RECORD_FIELDS):  # what the job itself recorded, e.g. a selection
        out.lines.append(f"{indent}  {key}: {_short(record[key])}")
    for name, spec in record["inputs"].items():
        out.lines.append(f"{indent}  <- {name}:")
        _walk(spec["path"], spec["sha256"], depth + 2, seen, out)


def explain_cell(table: str | Path, row: str, col: str) -> Explanation:
    record = read_record(table)
    if record is None:
        raise ValueError(f"{table}: no provenance record ({table}.prov.json)")
    cells = record["cells"]
    if row not in cells:
        raise ValueError(f"{table}: unknown row {row!r}; expected one of {sorted(cells)}")
    if col not in cells[row]:
        raise ValueError(f"{table}: unknown column {col!r}; expected one of {sorted(cells[row])}")
    cell = cells[row][col]
    out = Explanation()
    _walk(str(table), None, 0, set(), out)
    out.lines = [f"{table}: row {row!r}, column {col!r} = {cell['text']}  "
                 f"(mean ± sample std over {len(cell['sources'])} runs)", *out.lines[:1]]
    seen: set[str] = set()
    for source in cell["sources"]:
        out.lines.append(f"  seed {source['seed']}: value {source['value']:.4f}")
        for path in source["files"]:
            _walk(path, source["sha256"][path], 2, seen, out)
    # a file behind several evaluations (the base model, the dataset) is checked once per path to it
    out.problems, out.verified = list(dict.fromkeys(out.problems)), list(dict.fromkeys(out.verified))
    return out
