"""Bad data fails the job that prepares it, in one line naming the file (and line), expected and got.

Each case is a real tiny file: the mirror's first records of MATH500 (or a hand-written
user benchmark), broken one way, run through the command of the job that reads it.
"""

import gzip
import json
import re
from pathlib import Path

import pytest

from fpa.catalog import read_benchmarks_config
from fpa.cli import main
from fpa.data.download import fetch
from fpa.data.validate import check_user_benchmark
from fpa.samples.rows import read_records

ROOT = Path(__file__).resolve().parents[2]
CATALOG_PATH = ROOT / ".test" / "config_math" / "benchmarks.yaml"
MATH500 = read_benchmarks_config(CATALOG_PATH)["benchmarks"]["math500"]
ROWS = [{"unique_id": f"test/algebra/{i}.json", "problem": f"{i} + 1?", "answer": str(i + 1)} for i in range(3)]


def _lines(rows) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in rows)


BROKEN = {  # name: (file bytes, the message after the file name)
    "empty": (b"", ": empty file: expected 3 records, got none"),
    "blank lines only": (b"\n  \n", ": empty file: expected 3 records, got none"),
    "wrong count": (_lines(ROWS[:2]), ": expected 3 records, got 2"),
    "missing field": (_lines([ROWS[0], {k: v for k, v in ROWS[1].items() if k != "answer"}, ROWS[2]]),
                      ":2: field 'answer' is missing; expected the fields ['unique_id', 'problem', 'answer'], "
                      "got ['problem', 'unique_id']"),
    "non-UTF-8 byte": (_lines(ROWS[:2]) + b'{"unique_id": "x", "problem": "caf\xe9", "answer": "1"}\n',
                       ":3: not UTF-8: byte 0xe9 at column 35"),
    "bad JSON line": (_lines(ROWS[:1]) + b'{"unique_id": "x", "problem": \n' + _lines(ROWS[2:]),
                      ":2: invalid JSON (Expecting value at column 31)"),
    "not an object": (_lines(ROWS[:2]) + b'["a", "b"]\n', ":3: expected a JSON object, got list"),
}


def _prepare(tmp_path, path, records):
    """``fpa prepare-benchmark`` of MATH500 on ``path``, its catalog saying ``records``; the error line."""
    catalog = tmp_path / "benchmarks.yaml"
    catalog.write_text(CATALOG_PATH.read_text().replace("    records: 20\n", f"    records: {records}\n"))
    config = json.dumps({"source": "catalog", "parts": ["math500"], "n": 1, "grader": "math"})
    with pytest.raises(SystemExit) as exit_:
        main(["prepare-benchmark", "--name", "math500", "--config-json", config, "--catalog", str(catalog),
              "--out", str(tmp_path / "out.jsonl"), str(path)])
    assert exit_.value.code == 2 and not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_prepare_benchmark_fails_naming_file_and_line(tmp_path, capsys, case):
    content, message = BROKEN[case]
    path = tmp_path / "math500.jsonl"
    path.write_bytes(content)
    _prepare(tmp_path, path, records=3)
    assert capsys.readouterr().err.splitlines()[0] == f"fpa prepare-benchmark: error: {path}{message}"


def test_catalog_record_count_is_checked_by_prepare_benchmark(tmp_path, capsys):
    path = tmp_path / "math500.jsonl"
    path.write_bytes(_lines(ROWS))
    _prepare(tmp_path, path, records=20)
    assert f"{path}: expected 20 records, got 3" in capsys.readouterr().err


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_read_records_with_the_catalog_count(tmp_path, case):
    content, message = BROKEN[case]
    path = tmp_path / "bench.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError) as error:
        read_records(path, ("unique_id", "problem", "answer"), expected=3)
    assert str(error.value) == f"{path}{message}"


@pytest.mark.parametrize("case", ["empty", "wrong count", "non-UTF-8 byte", "bad JSON line"])
def test_fetch_data_fails_naming_the_mirror_file(tmp_path, case):
    """fetch-data checks every catalog file (also unpinned hub ones) before it lands in resources/."""
    content, message = BROKEN[case]
    mirror = tmp_path / "mirror"
    (mirror / "math500").mkdir(parents=True)
    source = mirror / "math500" / "test.jsonl"
    source.write_bytes(content)
    entry = {**MATH500, "name": "math500", "sha256": None, "hub": "example/math500", "records": 3}
    dest = tmp_path / "resources" / "math500.jsonl"
    with pytest.raises(ValueError) as error:
        fetch(entry, dest, mirror_dir=mirror)
    assert str(error.value) == f"math500: {source}{message}"
    assert not dest.exists() and not list(dest.parent.iterdir())


def test_fetch_data_reads_a_gzip_file_through_its_temporary_name(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "math").mkdir(parents=True)
    (mirror / "math" / "train.jsonl.gz").write_bytes(gzip.compress(_lines(ROWS)))
    entry = {"name": "math_train", "path": "math/train.jsonl.gz", "sha256": None, "hub": "x/y", "records": 4}
    with pytest.raises(ValueError, match="expected 4 records, got 3"):
        fetch(entry, tmp_path / "train.jsonl.gz", mirror_dir=mirror)
    assert fetch({**entry, "records": 3}, tmp_path / "train.jsonl.gz", mirror_dir=mirror).is_file()


def test_truncated_gzip_names_the_file(tmp_path):
    path = tmp_path / "train.jsonl.gz"
    path.write_bytes(gzip.compress(_lines(ROWS))[:-12])
    with pytest.raises(ValueError, match=re.escape(f"{path}: not a complete gzip file")):
        read_records(path)


def test_math_train_fails_on_a_missing_solution(tmp_path, tiny, capsys):
    rows = [json.loads(line) for line in (tiny / "math" / "test.jsonl").read_text().splitlines()]
    del rows[4]["solution"]
    broken = tmp_path / "test.jsonl"
    broken.write_bytes(_lines(rows))
    with pytest.raises(SystemExit):
        main(["math-train", "--math-train", str(tiny / "math" / "train.jsonl.gz"), "--math-test", str(broken),
              "--math500", str(tiny / "math500" / "test.jsonl"), "--sample", "--out", str(tmp_path / "out.jsonl")])
    assert f"{broken}:5: field 'solution' is missing" in capsys.readouterr().err


USER_ROWS = [{"id": "q1", "problem": "1 + 1?", "answer": "2"}, {"id": "q2", "problem": "2 + 2?", "answer": "4"}]


@pytest.mark.parametrize("rows, message", [
    ([USER_ROWS[0], {"id": "q2", "problem": "2 + 2?"}],
     ":2: field 'answer' is missing; expected the fields ['id', 'problem', 'answer'], got ['id', 'problem']"),
    ([USER_ROWS[0], {**USER_ROWS[1], "answer": 4}], ":2: field 'answer': expected non-empty text, got 4"),
    ([USER_ROWS[0], {**USER_ROWS[1], "id": "q1"}], ":2: id 'q1': expected unique ids, got a repeat of line 1"),
])
def test_user_benchmark_rows(tmp_path, rows, message):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(_lines(rows))
    with pytest.raises(ValueError) as error:
        check_user_benchmark(path, "mine")
    assert str(error.value) == f"{path}{message}"


def test_validate_benchmark_writes_the_records_evaluation_reads(tmp_path, capsys):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(_lines([{**row, "extra": 1} for row in USER_ROWS]))
    out = tmp_path / "results" / "mine.jsonl"
    config = json.dumps({"source": "file", "path": str(path), "n": 1, "grader": "math", "records": 2})
    main(["validate-benchmark", "--name", "mine", "--config-json", config, "--out", str(out), str(path)])
    assert read_records(out) == [{**row, "source": "mine"} for row in USER_ROWS]
    config = json.dumps({"source": "file", "path": str(path), "n": 1, "grader": "math", "records": 3})
    with pytest.raises(SystemExit):
        main(["validate-benchmark", "--name", "mine", "--config-json", config, "--out", str(out), str(path)])
    assert f"{path}: expected 3 records, got 2" in capsys.readouterr().err


SPEC = json.dumps({"testtype": "stdin", "tests": [{"input": "1\n", "output": "2\n"}]})


@pytest.mark.parametrize("grader, answer, message", [
    ("toy", "five", "expected an integer (the toy grader compares the last \\boxed{} with it), got 'five'"),
    ("toy", "4.0", "expected an integer (the toy grader compares the last \\boxed{} with it), got '4.0'"),
    ("code_tests", "print(2)", "code_tests: gold is not a JSON test spec (Expecting value): 'print(2)'"),
    ("code_tests", '{"testtype": "stdin", "tests": []}', "code_tests: tests: expected a non-empty list, got list []"),
    ("code_tests", '{"testtype": "python"}', "code_tests: expected {testtype: stdin|functional, func_name, "
     "tests: [...]}, got '{\"testtype\": \"python\"}'"),
    # issue 58: each test of the record against the family's schema, before any sampling
    ("code_tests", '{"testtype": "stdin", "tests": [{"input": "1", "output": "2"}, {"input": "2", "output": 3}]}',
     "code_tests: tests[1].output: expected a string, got int"),
    ("code_tests", '{"testtype": "stdin", "tests": [{"output": "2"}]}', "code_tests: tests[0].input: expected a string, "
     "got nothing"),
    ("code_tests", '{"testtype": "functional", "func_name": null, "tests": [{"input": "1", "output": "2"}]}',
     "code_tests: func_name: expected a function name for a functional spec, got None"),
    ("code_tests", '{"testtype": "stdin", "tests": {"input": "1", "output": "2"}}',
     "code_tests: tests: expected a non-empty list, got dict {'input': '1', 'output': '2'}"),
])
def test_validate_benchmark_refuses_a_gold_its_grader_cannot_read(tmp_path, capsys, grader, answer, message):
    """Issue 52: before, the file passed and the evaluation job failed on the gold, after training."""
    path = tmp_path / "mine.jsonl"
    good = {"toy": "2", "code_tests": SPEC}[grader]
    path.write_bytes(_lines([{**USER_ROWS[0], "answer": good}, {**USER_ROWS[1], "answer": answer}]))
    out = tmp_path / "results" / "mine.jsonl"
    config = json.dumps({"source": "file", "path": str(path), "n": 1, "grader": grader})
    with pytest.raises(SystemExit) as exit_:
        main(["validate-benchmark", "--name", "mine", "--config-json", config, "--out", str(out), str(path)])
    assert exit_.value.code == 2 and not out.exists()
    assert capsys.readouterr().err.splitlines()[0] == f"fpa validate-benchmark: error: {path}:2: field 'answer': {message}"


@pytest.mark.parametrize("grader, answer", [("toy", " -12 "), ("math", "five"), ("math", "\\frac{1}{2}"),
                                            ("code_tests", SPEC)])
def test_validate_benchmark_takes_a_gold_its_grader_reads(tmp_path, grader, answer):
    path = tmp_path / "mine.jsonl"
    path.write_bytes(_lines([{**USER_ROWS[0], "answer": answer}]))
    out = tmp_path / "mine.out.jsonl"
    config = json.dumps({"source": "file", "path": str(path), "n": 1, "grader": grader})
    main(["validate-benchmark", "--name", "mine", "--config-json", config, "--out", str(out), str(path)])
    assert read_records(out)[0]["answer"] == answer


@pytest.mark.parametrize("gold", ["4", " -12 ", "+7", "0", "five", "4.0", "", "1e3", "\\frac{1}{2}"])
def test_the_toy_gold_check_refuses_what_the_toy_grader_cannot_grade(gold):
    """The check is the grader's own reading of a gold: it refuses a gold exactly where grading it raises."""
    from fpa.grading import get_gold_check, get_grader

    def raises(function, *args) -> bool:
        try:
            function(*args)
        except ValueError:
            return True
        return False

    assert raises(get_gold_check("toy"), gold) == raises(get_grader("toy"), [("so \\boxed{4}", gold)])
