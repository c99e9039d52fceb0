"""Data files checked where they are prepared, so a bad file fails its own small job.

Every reader of a benchmark or training file goes through ``read_records``: the file is
non-empty UTF-8 JSONL of objects, each with the fields its loader reads, and (where a
catalog or config says how many) has the expected number of records. Each failure is one
line naming the file (and line), what was expected and what was got, raised before
anything is built from the file: a benchmark that cannot be graded never reaches the
GPU job that samples it.

``check_user_benchmark`` is the check of a ``source: file`` benchmark (a user's own
JSONL): the records evaluation reads, ``{id, problem, answer}``.
"""

from __future__ import annotations

import os
from typing import Sequence

from fpa.io import iter_jsonl

#: The fields of the records every sampling job reads (fpa.data.records.MathProblem).
RECORD_FIELDS = ("id", "problem", "answer")


def read_records(path: str | os.PathLike, fields: Sequence[str] = (), expected: int | None = None,
                 gzipped: bool | None = None) -> list[dict]:
    """The JSON objects of a JSONL file, each holding ``fields``; ``expected`` of them if given."""
    return [record for _, record in numbered_records(path, fields, expected, gzipped)]


def numbered_records(path: str | os.PathLike, fields: Sequence[str] = (), expected: int | None = None,
                     gzipped: bool | None = None) -> list[tuple[int, dict]]:
    """``read_records`` with each record's line number (for messages about its values)."""
    records = []
    for line, record in iter_jsonl(path, gzipped):
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{line}: expected a JSON object, got {type(record).__name__}")
        missing = [field for field in fields if field not in record]
        if missing:
            raise ValueError(f"{path}:{line}: field {missing[0]!r} is missing; expected the fields "
                             f"{list(fields)}, got {sorted(record)}")
        records.append((line, record))
    if not records:
        raise empty_file(path, expected)
    check_count(path, len(records), expected)
    return records


def empty_file(path: str | os.PathLike, expected: int | None) -> ValueError:
    wanted = f"{expected} records" if expected is not None else "JSONL records"
    return ValueError(f"{path}: empty file: expected {wanted}, got none")


def check_not_empty(path: str | os.PathLike, expected: int | None) -> None:
    """At least one record (read up to the first), so an empty file's error can say how many were due."""
    if next(iter_jsonl(path), None) is None:
        raise empty_file(path, expected)


def check_count(path: str | os.PathLike, got: int, expected: int | None) -> None:
    """``got`` records where the catalog (or config) says ``expected`` (None: any number)."""
    if expected is not None and got != expected:
        raise ValueError(f"{path}: expected {expected} records, got {got}")


def check_user_benchmark(path: str | os.PathLike, source: str, expected: int | None = None) -> list[dict]:
    """A ``source: file`` benchmark as evaluation reads it: unique ids, text problems and answers."""
    records = numbered_records(path, RECORD_FIELDS, expected)
    seen: dict[str, int] = {}
    for line, record in records:
        for field in RECORD_FIELDS:
            if not isinstance(record[field], str) or not record[field].strip():
                raise ValueError(f"{path}:{line}: field {field!r}: expected non-empty text, got {record[field]!r}")
        if record["id"] in seen:
            raise ValueError(f"{path}:{line}: id {record['id']!r}: expected unique ids, got a repeat of line "
                             f"{seen[record['id']]}")
        seen[record["id"]] = line
    return [{"id": r["id"], "problem": r["problem"], "answer": r["answer"], "source": source} for _, r in records]
