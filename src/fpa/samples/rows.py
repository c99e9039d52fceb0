"""The rows of an upstream JSONL file, each checked for the fields its loader reads (``read_records``):
what every benchmark's and training source's problem loader reads its file with, the code benchmark
families' (``fpa.grading.code``) as the math loaders (``fpa.data.benchmarks``). Each failure is one line
naming the file and line, what was expected and what was got."""

from __future__ import annotations

import os
from typing import Mapping, Sequence, Union

from fpa.io import ReadBounds, iter_jsonl

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


def check_count(path: str | os.PathLike, got: int, expected: int | None) -> None:
    """``got`` records where the catalog (or config) says ``expected`` (None: any number)."""
    if expected is not None and got != expected:
        raise ValueError(f"{path}: expected {expected} records, got {got}")
