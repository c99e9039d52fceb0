"""Text that validates and fails later (issue 42): control characters, lone surrogates, a key twice in
one object and problems equal after NFC are refused in one line naming file, record and field, by
``fpa validate-benchmark`` and by the validation every benchmark-reading rule runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fpa.catalog import declared_duplicates, read_benchmarks_config
from fpa.data.benchmarks import load_benchmark, restore_latex_commands
from fpa.data.text import ALLOWED_CONTROLS, check_text, nfc_duplicates

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data"))
ROWS = ['{"id": "a", "problem": "1 + 1?", "answer": "2"}', '{"id": "b", "problem": "Caf\\u00e9 costs?", "answer": "3"}']
LINE = ROWS[0][:-1]  # the first record without its closing brace


def _validate(tmp_path: Path, lines: list[str]) -> subprocess.CompletedProcess:
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return subprocess.run([sys.executable, "-m", "fpa", "validate-benchmark", str(path), "--name", "mine",
                           "--config-json", json.dumps({"source": "file", "path": str(path)}), "--out",
                           str(tmp_path / "out.jsonl")], capture_output=True, text=True, timeout=120)


def _errors(result: subprocess.CompletedProcess) -> list[str]:
    """stderr but the resource-usage line every data command ends with."""
    return [line for line in result.stderr.splitlines() if not line.startswith("fpa usage:")]


CASES = {
    "key_twice": (LINE + ', "problem": "x"}', r":1: key 'problem': twice in one object; expected each key once"),
    "nul_in_problem": ('{"id": "a", "problem": "1 +\\u0000 1?", "answer": "2"}',
                       r":1: field 'problem': a control character U\+0000 at character 4 \('1 \+' before it\)"),
    "escape_sequence": ('{"id": "a", "problem": "\\u001b[2J1 + 1?", "answer": "2"}',
                        r":1: field 'problem': a control character U\+001B at character 1"),
    "c1_control": ('{"id": "a", "problem": "1\\u0085 + 1?", "answer": "2"}', r":1: field 'problem': a control character U\+0085"),
    "form_feed_in_answer": ('{"id": "a", "problem": "1 + 1?", "answer": "\\frac12"}',
                            r":1: field 'answer': a control character U\+000C at character 1"),
    "lone_surrogate": ('{"id": "a", "problem": "1 + 1?\\ud800", "answer": "2"}',
                       r":1: field 'problem': a lone surrogate U\+D800 at character 7"),
    "lone_low_surrogate_in_key": ('{"id": "a", "problem": "1", "answer": "2", "\\udc00": 1}',
                                  r":1: field '<key>': a lone surrogate U\+DC00"),
}


@pytest.mark.parametrize("case", CASES)
def test_validate_benchmark_refuses_each_class_in_one_line(tmp_path, case):
    line, expected = CASES[case]
    result = _validate(tmp_path, [line, ROWS[1]])
    assert result.returncode == 2 and len(_errors(result)) == 1, result.stderr
    assert re.match(re.escape(f"fpa validate-benchmark: error: {tmp_path / 'mine.jsonl'}") + expected,
                    _errors(result)[0]), result.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_validate_benchmark_refuses_a_problem_equal_to_another_after_nfc(tmp_path):
    twin = '{"id": "c", "problem": "Cafe\\u0301 costs?", "answer": "3"}'  # "e" + combining acute: NFD of "é"
    result = _validate(tmp_path, [*ROWS, twin])
    assert result.returncode == 2, result.stderr
    assert _errors(result) == [f"fpa validate-benchmark: error: {tmp_path / 'mine.jsonl'}: line 3: field 'problem': "
                                     "the same text as line 2 after Unicode NFC normalisation (1 repeats, 0 declared by "
                                     "duplicate_problems); expected each problem once (a repeat counts twice in Pass@1)"]


def test_validate_benchmark_accepts_tabs_line_breaks_and_non_bmp_text(tmp_path):
    line = json.dumps({"id": "z", "problem": "a\tb\r\nc \U0001F600 \U0010FFFF e\u0301", "answer": "\U0001D400"})
    result = _validate(tmp_path, [*ROWS, line])
    assert result.returncode == 0, result.stderr
    assert [json.loads(row)["problem"] for row in (tmp_path / "out.jsonl").read_text().splitlines()][-1] == \
        json.loads(line)["problem"]


@pytest.mark.parametrize("char", sorted({chr(code) for code in [*range(0x20), *range(0x7F, 0xA0)]} - set(ALLOWED_CONTROLS)))
def test_every_control_character_but_tab_and_line_breaks_is_refused(char):
    with pytest.raises(ValueError, match=rf"^f:3: field 'problem': a control character U\+{ord(char):04X}"):
        check_text(f"x{char}y", "f:3", "problem")


def test_nfc_duplicates_names_each_repeat_and_its_first():
    assert nfc_duplicates(["\u00e9", "x", "e\u0301", "\u00e9", "E\u0301"]) == [(2, 0), (3, 0)]


def test_restore_latex_commands_repairs_what_json_read_as_escapes_only():
    assert restore_latex_commands("$\x0crac{m}{n}$, $\triangle$ and \x08inom") == "$\\frac{m}{n}$, $\\triangle$ and \\binom"
    assert restore_latex_commands("a\tb\n\tc") == "a\tb\n\tc"


@pytest.mark.skipif(not (MIRROR / "aime25" / "test.jsonl").is_file(), reason="the data mirror is not here")
def test_the_real_benchmarks_hold_no_refused_text_and_declare_their_repeats():
    """The mirror's AIME 2025 holds \\frac and \\triangle read as a form feed and a tab (records 19, 20,
    28): the loader restores them. BigCodeBench repeats one prompt (tasks 1120, 1121): declared."""
    catalog = read_benchmarks_config(ROOT / "config" / "benchmarks.yaml")
    entries = {name: entry for section in ("benchmarks", "code") for name, entry in catalog[section].items()
               if "path" in entry and (MIRROR / entry["path"]).is_file()}
    assert {"aime25", "bigcodebench", "math500"} <= set(entries)
    for name, entry in entries.items():
        problems = load_benchmark(entry["loader"], MIRROR / entry["path"], name, duplicates=declared_duplicates(entry))
        assert len(problems) == entry["records"], name
    assert {name: declared_duplicates(entry) for name, entry in entries.items() if declared_duplicates(entry)} == \
        {"bigcodebench": 1}
    aime25 = load_benchmark("aime", MIRROR / "aime25" / "test.jsonl", "aime25")
    assert "\\frac{\\log_k" in aime25[18].problem and aime25[19].problem.startswith("Suppose $\\triangle ABC$")
    with pytest.raises(ValueError, match=r"record 1122: field 'problem': the same text as record 1121 after Unicode NFC"):
        load_benchmark("bigcodebench", MIRROR / entries["bigcodebench"]["path"], "bigcodebench")
