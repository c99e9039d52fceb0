"""Property-based fuzzing of the data commands: ``fpa prepare-benchmark`` and ``fpa validate-benchmark``
on generated files either succeed or refuse in one line, never hang, crash or print a traceback.

Files start from real records (the tiny mirror's first rows of each loader's file, a user's
benchmark rows) and are broken the ways careless users and attackers break them: a field's value
replaced by any JSON (huge integers, NaN, unicode, nesting), a field dropped or added, a record
that is not an object, raw lines (invalid UTF-8, deep brackets, 5,000-digit numbers, lines past
the bound on one record), blank and CRLF lines, a record count the catalog does not expect,
gzip (whole or truncated); and (issue 42) text a tokenizer fails on or that counts twice: control
characters, lone surrogates and non-BMP characters put into a text field, a key twice in one object,
a record whose problem is another's after NFC. Each file runs through the command as a job runs it
(``fpa.cli.main``); what a command accepts holds none of the refused text.

CI runs a fixed, derandomised budget (``FUZZ_EXAMPLES`` per command, under a minute in all);
``FPA_FUZZ_EXAMPLES=2000 FPA_FUZZ_SEED=random pytest tests/data/test_data_fuzz.py -s`` runs a
larger, random one. Each run prints how many cases it tried and how they ended.
"""

from __future__ import annotations

import collections
import contextlib
import gzip
import io
import json
import os
import re
import signal
from pathlib import Path

import unicodedata

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fpa.catalog import read_benchmarks_config
from fpa.cli import main

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "config" / "benchmarks.yaml"
FUZZ_EXAMPLES = int(os.environ.get("FPA_FUZZ_EXAMPLES", "50"))
RANDOM = os.environ.get("FPA_FUZZ_SEED") == "random"
HANG_S = 20  # far above any case's time: past it the case hangs
OUTCOMES: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize=not RANDOM, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])


def _seed_rows() -> dict[str, list[dict]]:
    """Three real rows of each catalog part whose file the tiny mirror has (a math loader)."""
    tiny = Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data")) / "tiny"
    seeds = {}
    for section in ("benchmarks", "training"):
        for name, entry in read_benchmarks_config(CATALOG).get(section, {}).items():
            path = tiny / entry.get("path", "-")
            if path.is_file() and entry["loader"] in _LOADER_PARTS:
                opener = gzip.open if path.suffix == ".gz" else open
                with opener(path, "rt") as handle:
                    seeds[name] = [json.loads(next(handle)) for _ in range(3)]
    return seeds


_LOADER_PARTS = {"gsm8k", "math500", "math", "math_perturb", "aime", "aime26", "amc", "gaokao2023en", "olympiadbench"}
SEEDS = _seed_rows() if (ROOT.parent / "shared" / "data").exists() or "FPA_DATA_MIRROR" in os.environ else {}
USER_ROWS = [{"id": f"q{i}", "problem": f"{i} + 1?", "answer": str(i + 1)} for i in range(3)]

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.integers(min_value=10**30) | st.floats()
    | st.text(max_size=20) | st.sampled_from(["", " ", "####", "#### 12", "\\boxed{", "$", "\x00", "\ud7ff"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)
#: a character a text field gets (issue 42): refused controls and lone surrogates, allowed ones, non-BMP, combining
HOSTILE_CHARS = st.sampled_from(["\x00", "\x0c", "\x1b", "\x7f", "\x85", "\ud800", "\udfff", "\t", "\r", "\n",
                                 "\U0001F600", "\U0010FFFF", "\u0301", "\u2028"]) | st.characters()
REFUSED_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
RAW_LINES = st.sampled_from([
    b"\xff\xfe not utf-8", b"[" * 50_000, b'{"a": ' * 3000, b"1" * 5000, b"NaN", b"-Infinity", b'"just a string"',
    b"{}", b"null", b"\r", b"  ", b'{"id": "x"', b"{\"k\": \"" + b"x" * (70 << 10) + b"\"}",
]) | st.binary(max_size=40)


@st.composite
def broken_file(draw, rows: list[dict]) -> tuple[bytes, int]:
    """(file bytes, the record count a config or catalog expects) from ``rows``, broken."""
    # distinct rows: a repeat is a duplicate problem, which the "nfc twin" action makes on purpose
    rows = [dict(rows[index]) for index in draw(st.lists(st.integers(0, len(rows) - 1), max_size=4, unique=True))]
    lines: list[bytes] = []
    for row in rows:
        action = draw(st.sampled_from(["keep"] * 6 + ["replace", "replace", "drop", "add", "not an object",
                                                      "hostile text", "hostile text", "key twice", "nfc twin"]))
        texts = sorted(key for key, value in row.items() if isinstance(value, str))
        if action == "hostile text" and texts:
            field = draw(st.sampled_from(texts))
            at = draw(st.integers(0, len(row[field])))
            row[field] = row[field][:at] + draw(HOSTILE_CHARS) + row[field][at:]
        elif action == "key twice" and texts:  # JSON keeps the last: the first text is silently lost
            field = draw(st.sampled_from(texts))
            text = json.dumps(row)
            lines.append((text[:-1] + f", {json.dumps(field)}: {json.dumps(row[field] + ' again')}}}").encode())
            continue
        elif action == "nfc twin" and lines and texts:  # the same problem, decomposed (NFD): equal after NFC
            row = {key: unicodedata.normalize("NFD", "é " + value) if isinstance(value, str) else value
                   for key, value in row.items()}
            lines.append(json.dumps(dict(row, id="twin")).encode())
            row = {key: unicodedata.normalize("NFC", value) if isinstance(value, str) else value
                   for key, value in row.items()}
        elif action == "replace":
            row[draw(st.sampled_from(sorted(row)))] = draw(JSON_VALUES)
        elif action == "drop" and row:
            del row[draw(st.sampled_from(sorted(row)))]
        elif action == "add":
            row[draw(st.text(max_size=8))] = draw(JSON_VALUES)
        value = draw(JSON_VALUES) if action == "not an object" else row
        lines.append(json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass"))
    records = len(lines)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        lines.insert(draw(st.integers(0, len(lines))), draw(RAW_LINES))
    ending = draw(st.sampled_from([b"\n", b"\r\n"]))
    content = b"".join(line + ending for line in lines)
    expected = records + draw(st.sampled_from([0, 0, 0, 0, 1, -1]))
    return content, expected


def _write(tmp_path: Path, content: bytes, packing: str) -> Path:
    if packing == "plain":
        path = tmp_path / "data.jsonl"
        path.write_bytes(content)
        return path
    path = tmp_path / "data.jsonl.gz"
    packed = gzip.compress(content, mtime=0)
    path.write_bytes(packed if packing == "gzip" else packed[: max(1, len(packed) // 2)])
    return path


def _catalog_expecting(tmp_path: Path, part: str, records: int) -> Path:
    """The catalog with ``part``'s ``records`` set to ``records``."""
    text = CATALOG.read_text()
    records_at = re.compile(r"    records: \d+\n").search(text, text.index(f"\n  {part}:\n"))
    catalog = tmp_path / "benchmarks.yaml"
    catalog.write_text(text[:records_at.start()] + f"    records: {records}\n" + text[records_at.end():])
    return catalog


def _run(command: str, argv: list[str]) -> str:
    """Run ``fpa argv``: a success, or exit 2 with one stderr line naming the command (returned); else fail."""
    stderr = io.StringIO()

    def hang(*_):
        raise TimeoutError(f"fpa {command} ran past {HANG_S} s")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(HANG_S)
    try:
        with contextlib.redirect_stderr(stderr):
            main(argv)
        OUTCOMES[command]["accepted"] += 1
        return ""
    except SystemExit as exit_:
        lines = [line for line in stderr.getvalue().splitlines() if not line.startswith("fpa usage:")]
        assert exit_.code == 2 and len(lines) == 1 and lines[0].startswith(f"fpa {command}: error: "), lines
        OUTCOMES[command]["refused: " + _kind(lines[0])] += 1
        return lines[0]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _kind(message: str) -> str:
    """The refusal's kind, for the summary: its text past the file name, without values."""
    text = message.split(": error: ", 1)[1].split(": ", 1)[-1]
    for marker in (" (", ", got", "; "):
        text = text.split(marker, 1)[0]
    return re.sub(r"0x[0-9a-f]+|\d+", "N", text)[:60]


@pytest.fixture(scope="module", autouse=True)
def summary():
    yield
    for command, counts in sorted(OUTCOMES.items()):
        print(f"\n{command}: {sum(counts.values())} cases: " + ", ".join(f"{n} {k}" for k, n in counts.most_common()))


@FUZZ
@given(data=st.data(), packing=st.sampled_from(["plain", "plain", "plain", "gzip", "truncated gzip"]))
def test_validate_benchmark_accepts_or_refuses_in_one_line(tmp_path, data, packing):
    content, expected = data.draw(broken_file(USER_ROWS))
    path = _write(tmp_path, content, packing)
    config = json.dumps({"source": "file", "path": str(path), "n": 1, "grader": "math", "records": max(expected, 1)})
    if not _run("validate-benchmark", ["validate-benchmark", str(path), "--name", "mine", "--config-json", config,
                                       "--out", str(tmp_path / "out.jsonl")]):
        _assert_tokenizable(tmp_path / "out.jsonl", ("problem", "answer"))


def _assert_tokenizable(path: Path, fields: tuple[str, ...]) -> None:
    """What a command accepted: no refused character in ``fields``, no problem twice after NFC."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert not [record for record in records for field in fields if REFUSED_TEXT.search(record[field])], records
    problems = [unicodedata.normalize("NFC", record["problem"]) for record in records]
    assert len(set(problems)) == len(problems), problems


@pytest.mark.skipif(not SEEDS, reason="the tiny data mirror is not here (set FPA_DATA_MIRROR)")
@FUZZ
@given(data=st.data(), packing=st.sampled_from(["plain", "plain", "plain", "gzip", "truncated gzip"]))
def test_prepare_benchmark_accepts_or_refuses_in_one_line(tmp_path, data, packing):
    part = data.draw(st.sampled_from(sorted(SEEDS)))
    content, expected = data.draw(broken_file(SEEDS[part]))
    path = _write(tmp_path, content, packing)
    catalog = _catalog_expecting(tmp_path, part, max(expected, 1))
    if not _run("prepare-benchmark", ["prepare-benchmark", str(path), "--name", part, "--catalog", str(catalog),
                                      "--config-json", json.dumps({"parts": [part]}), "--out",
                                      str(tmp_path / "out.jsonl")]):
        _assert_tokenizable(tmp_path / "out.jsonl", ("problem",))


@pytest.mark.parametrize("part, field, value, message", [  # what the fuzzing found: tracebacks before
    ("gsm8k", "answer", None, "field 'answer': expected text, got NoneType None"),  # TypeError in load_gsm8k
    ("math_test", "solution", None, "field 'solution': expected text, got NoneType None"),  # TypeError in last_boxed
    ("olympiadbench", "final_answer", [1], "field 'final_answer': expected a list of text, got [1]"),
])
def test_a_field_of_the_wrong_type_is_refused_in_one_line(tmp_path, part, field, value, message):
    if part not in SEEDS:
        pytest.skip(f"no tiny mirror file for {part}")
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps({**row, field: value if i == 1 else row[field]}) + "\n"
                            for i, row in enumerate(SEEDS[part])))
    catalog = _catalog_expecting(tmp_path, part, len(SEEDS[part]))
    error = _run("prepare-benchmark", ["prepare-benchmark", str(path), "--name", part, "--catalog", str(catalog),
                                       "--config-json", json.dumps({"parts": [part]}), "--out",
                                       str(tmp_path / "out.jsonl")])
    assert error.startswith(f"fpa prepare-benchmark: error: {path}") and error.endswith(message), error
