"""Data files checked where they are prepared, so a bad file fails its own small job.

Every reader of a benchmark or training file goes through ``read_records``: the file is
non-empty UTF-8 JSONL of objects, each with the fields its loader reads, and (where a
catalog or config says how many) has the expected number of records. Each failure is one
line naming the file (and line), what was expected and what was got, raised before
anything is built from the file: a benchmark that cannot be graded never reaches the
GPU job that samples it.

Every read is bounded (``fpa.io.ReadBounds``): a line longer than the bound on one record,
a ``.gz`` that decompresses past its bound, or more records than expected is refused as soon as
it is read, so a compression bomb costs no more memory than its bounds.

``check_user_benchmark`` is the check of a ``source: file`` benchmark (a user's own
JSONL): the records evaluation reads, ``{id, problem, answer}``, each at most
``USER_RECORD_BYTES`` long, each answer one its grader can read (``fpa.grading.get_gold_check``).
"""

from __future__ import annotations

import os
from typing import Callable, Mapping, Sequence, Union

from fpa.data.text import check_duplicates, check_text
from fpa.io import ReadBounds, iter_jsonl

#: The fields of the records every sampling job reads (fpa.samples.records.MathProblem).
RECORD_FIELDS = ("id", "problem", "answer")
#: The longest record of a ``source: file`` benchmark: a problem and its answer (the longest
#: math record in the mirror is 11 KB).
USER_RECORD_BYTES = 1 << 20
#: The most a ``source: file`` benchmark may hold (decompressed): 140 times MATH500's file.
USER_BENCHMARK_BYTES = 64 << 20
#: The fields a reader needs: names, or names with the type(s) each value must have.
Fields = Union[Sequence[str], Mapping[str, Union[type, tuple]]]


def read_records(path: str | os.PathLike, fields: Fields = (), expected: int | None = None,
                 gzipped: bool | None = None, bounds: ReadBounds = ReadBounds()) -> list[dict]:
    """The JSON objects of a JSONL file, each holding ``fields``; ``expected`` of them if given."""
    return [record for _, record in numbered_records(path, fields, expected, gzipped, bounds)]


def numbered_records(path: str | os.PathLike, fields: Fields = (), expected: int | None = None,
                     gzipped: bool | None = None, bounds: ReadBounds = ReadBounds()) -> list[tuple[int, dict]]:
    """``read_records`` with each record's line number (for messages about its values)."""
    records = []
    for line, record in iter_jsonl(path, gzipped, bounds):
        check_record(path, line, record, fields)
        records.append((line, record))
        if expected is not None and len(records) > expected:
            raise ValueError(f"{path}: expected {expected} records, got more (line {line} is record {len(records)})")
    if not records:
        raise empty_file(path, expected)
    check_count(path, len(records), expected)
    return records


def check_record(path: str | os.PathLike, line: int, record, fields: Fields) -> None:
    """``record`` is a JSON object holding ``fields`` (of their types, where ``fields`` gives them)."""
    if not isinstance(record, dict):
        raise ValueError(f"{path}:{line}: expected a JSON object, got {type(record).__name__}")
    missing = [field for field in fields if field not in record]
    if missing:
        raise ValueError(f"{path}:{line}: field {missing[0]!r} is missing; expected the fields "
                         f"{list(fields)}, got {sorted(record)}")
    for field, kinds in (fields.items() if isinstance(fields, Mapping) else ()):
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        value = record[field]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            expected = " or ".join(_JSON_NAMES.get(kind, kind.__name__) for kind in kinds)
            raise ValueError(f"{path}:{line}: field {field!r}: expected {expected}, got {type(value).__name__} "
                             f"{_preview(value)}")


_JSON_NAMES = {str: "text", int: "integer", float: "number", list: "list", dict: "object"}


def _preview(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def empty_file(path: str | os.PathLike, expected: int | None) -> ValueError:
    wanted = f"{expected} records" if expected is not None else "JSONL records"
    return ValueError(f"{path}: empty file: expected {wanted}, got none")


def scan_records(path: str | os.PathLike, expected: int | None, bounds: ReadBounds) -> None:
    """Read the whole file within ``bounds`` holding one record at a time: not empty, and
    ``expected`` records if given. The check before a loader reads the file whole."""
    count = 0
    for line, _ in iter_jsonl(path, bounds=bounds):
        count += 1
        if expected is not None and count > expected:
            raise ValueError(f"{path}: expected {expected} records, got more (line {line} is record {count})")
    if not count:
        raise empty_file(path, expected)
    check_count(path, count, expected)


def check_count(path: str | os.PathLike, got: int, expected: int | None) -> None:
    """``got`` records where the catalog (or config) says ``expected`` (None: any number)."""
    if expected is not None and got != expected:
        raise ValueError(f"{path}: expected {expected} records, got {got}")


def check_user_benchmark(path: str | os.PathLike, source: str, expected: int | None = None,
                         gold_check: Callable[[str], object] | None = None) -> list[dict]:
    """A ``source: file`` benchmark as evaluation reads it: unique ids, text problems and answers that
    a tokenizer takes (``fpa.data.text``), no problem twice after NFC, and each answer one that
    ``gold_check`` (its grader's) does not refuse."""
    why = (f"a `source: file` benchmark: records of at most {USER_RECORD_BYTES} bytes, at most "
           f"{USER_BENCHMARK_BYTES} in all, fpa.data.validate")
    total = min(expected * USER_RECORD_BYTES, USER_BENCHMARK_BYTES) if expected else USER_BENCHMARK_BYTES
    records = numbered_records(path, RECORD_FIELDS, expected, bounds=ReadBounds(USER_RECORD_BYTES, total, why))
    seen: dict[str, int] = {}
    for line, record in records:
        for field in RECORD_FIELDS:
            if not isinstance(record[field], str) or not record[field].strip():
                raise ValueError(f"{path}:{line}: field {field!r}: expected non-empty text, got {record[field]!r}")
            check_text(record[field], f"{path}:{line}", field)
        if gold_check is not None:
            try:
                gold_check(record["answer"])
            except ValueError as error:
                raise ValueError(f"{path}:{line}: field 'answer': {error}") from None
        if record["id"] in seen:
            raise ValueError(f"{path}:{line}: id {record['id']!r}: expected unique ids, got a repeat of line "
                             f"{seen[record['id']]}")
        seen[record["id"]] = line
    check_duplicates(path, [record["problem"] for _, record in records], [line for line, _ in records], "problem",
                     unit="line")
    return [{"id": r["id"], "problem": r["problem"], "answer": r["answer"], "source": source} for _, r in records]
