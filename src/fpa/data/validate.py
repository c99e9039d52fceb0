"""Data files checked where they are prepared, so a bad file fails its own small job.

Every reader of a benchmark or training file goes through ``fpa.samples.rows.read_records``: the
file is non-empty UTF-8 JSONL of objects, each with the fields its loader reads, and (where a
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
from typing import Callable

from fpa.data.text import check_duplicates, check_text
from fpa.io import ReadBounds, iter_jsonl
from fpa.samples.rows import check_count, empty_file, numbered_records

#: The fields of the records every sampling job reads (fpa.samples.records.MathProblem).
RECORD_FIELDS = ("id", "problem", "answer")
#: The longest record of a ``source: file`` benchmark: a problem and its answer (the longest
#: math record in the mirror is 11 KB).
USER_RECORD_BYTES = 1 << 20
#: The most a ``source: file`` benchmark may hold (decompressed): 140 times MATH500's file.
USER_BENCHMARK_BYTES = 64 << 20
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
