"""Loaders on the real tiny files (first 20 records), one test per quirk."""

import json
from pathlib import Path

import pytest

from fpa.data.benchmarks import (
    AIME26_SUFFIX,
    MathProblem,
    load_aime,
    load_aime26,
    load_amc,
    load_benchmark,
    load_gaokao2023en,
    load_gsm8k,
    load_math,
    load_math500,
    load_math_perturb,
    load_olympiadbench,
    loaders,
    number_to_str,
)
from fpa.data.dataset_files import CODE_TRAIN_FILES
from fpa.catalog import available_files, read_benchmarks_config
from fpa.io import read_jsonl

CONFIG_PATH = Path(__file__).resolve().parents[2] / "config" / "benchmarks.yaml"
CONFIG = read_benchmarks_config(CONFIG_PATH)
FILES = available_files(CONFIG)


@pytest.mark.parametrize("name", sorted(FILES))
def test_every_file_loads_to_the_common_record(tiny, name):
    entry = FILES[name]
    problems = load_benchmark(entry["loader"], tiny / entry["path"], source=name)
    assert len(problems) == 20
    assert len({problem.id for problem in problems}) == 20
    for problem in problems:
        assert set(problem.to_dict()) == {"id", "problem", "answer", "source"}
        assert problem.source == name and problem.problem.strip() and problem.answer
        assert isinstance(problem.id, str) and isinstance(problem.answer, str)


def test_records_are_frozen():
    problem = MathProblem("x/0", "1+1?", "2", "x")
    with pytest.raises(AttributeError):
        problem.answer = "3"


def test_gsm8k_final_answer_after_hashes(tiny):
    problems = load_gsm8k(tiny / "gsm8k" / "test.jsonl")
    assert problems[0] == MathProblem("gsm8k/0", problems[0].problem, "18", "gsm8k")
    assert problems[2].answer == "70000"
    assert problems[0].problem.startswith("Janet")


def test_gsm8k_thousands_commas_dropped(tmp_path):
    # No tiny record has a comma; the full file has 16 (checked below).
    path = tmp_path / "test.jsonl"
    rows = [{"question": "q", "answer": "a <<2*500=1000>>\n#### 1,000"}, {"question": "r", "answer": "#### -10"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert [problem.answer for problem in load_gsm8k(path)] == ["1000", "-10"]


def test_gsm8k_full_file_commas(mirror):
    answers = [problem.answer for problem in load_gsm8k(mirror / "gsm8k" / "test.jsonl")]
    assert "," not in "".join(answers)
    assert "1450000" in answers  # upstream "#### 1,450,000"


def test_math500_answer_field(tiny):
    problems = load_math500(tiny / "math500" / "test.jsonl")
    assert problems[0].id == "test/precalculus/807.json"
    assert problems[0].answer == "\\left( 3, \\frac{\\pi}{2} \\right)"


def test_math_answer_is_last_boxed_with_nested_braces(tiny):
    problems = {problem.id: problem for problem in load_math(tiny / "math" / "test.jsonl", "math_test")}
    assert problems["test/algebra/2.json"].answer == "\\frac{1}{2}"
    assert problems["test/algebra/32.json"].answer == "7,9,12,13"
    train = load_math(tiny / "math" / "train.jsonl.gz", "math_train")
    assert train[1].answer == "8+4i"


def test_math_perturb_numbers_to_strings(tiny):
    simple = load_math_perturb(tiny / "math_perturb" / "math_perturb_simple.jsonl", "math_perturb_simple")
    by_id = {problem.id: problem.answer for problem in simple}
    assert by_id["math_perturb_simple/1"] == "10"  # JSON int
    assert by_id["math_perturb_simple/10"] == "16.5"  # JSON float
    assert by_id["math_perturb_simple/2"] == "6-\\sqrt{5}"  # JSON string


def test_gaokao_dollars_stripped(tiny):
    problems = load_gaokao2023en(tiny / "gaokao2023en" / "test.jsonl")
    assert problems[0].answer == "\\{x|-2\\leq x < 1\\}"  # upstream "$\{x|-2\leq x < 1\}$"
    assert problems[8].answer == "48, 384"  # upstream "$48$, $384$"
    assert problems[2].answer == "-1"  # not wrapped upstream
    assert all("$" not in problem.answer for problem in problems)


def test_olympiadbench_list_answers(tiny):
    by_id = {p.id: p.answer for p in load_olympiadbench(tiny / "olympiadbench" / "test.jsonl")}
    assert by_id["olympiadbench/1606"] == "2"  # ["2"]
    assert by_id["olympiadbench/1610"] == "\\frac{1}{2 n+2}"  # ["$\frac{1}{2 n+2}$"]
    assert by_id["olympiadbench/1664"] == "69,84"  # multi-answer ["$69$,$84$"]
    assert by_id["olympiadbench/1618"] == "(1,8,19), (2,7,13), (4,5,7)"


def test_olympiadbench_multi_element_list_joined(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"id": 7, "question": "q", "final_answer": ["$1$", "$2$"]}) + "\n")
    assert load_olympiadbench(path)[0].answer == "1, 2"


def test_amc_float_answers(tiny):
    problems = load_amc(tiny / "amc23" / "test.jsonl", "amc23")
    assert problems[0] == MathProblem("amc23/0", problems[0].problem, "27", "amc23")  # 27.0
    assert [p.answer for p in problems if p.id == "amc23/17"] == ["-1"]  # -1.0


def test_aime_zero_padding_dropped(tiny):
    problems = {p.id: p.answer for p in load_aime(tiny / "aime24" / "test.jsonl", "aime24")}
    assert problems["aime24/67"] == "25"  # upstream "025"
    assert problems["aime24/75"] == "73"  # upstream "073"
    assert problems["aime24/60"] == "204"
    assert load_aime(tiny / "aime25" / "test.jsonl", "aime25")[0].id == "aime25/0"


def test_aime26_instruction_stripped(tiny):
    rows = read_jsonl(tiny / "aime26" / "test.jsonl")
    problems = load_aime26(tiny / "aime26" / "test.jsonl")
    for row, problem in zip(rows, problems):
        assert row["prompt"].endswith(AIME26_SUFFIX)
        assert "Please reason step by step" not in problem.problem
        assert row["prompt"].startswith(problem.problem)
    assert problems[0].problem.endswith("Find $m + n$.")


def test_aime26_missing_suffix_is_an_error(tmp_path):
    path = tmp_path / "aime26.jsonl"
    path.write_text(json.dumps({"prompt": "What is 1+1?", "answer": "2"}) + "\n")
    with pytest.raises(ValueError, match="instruction suffix"):
        load_aime26(path)


@pytest.mark.parametrize(
    "value, expected", [(27.0, "27"), (-1.0, "-1"), (16.5, "16.5"), (10, "10"), ("025", "25"), ("0 or 4", "0 or 4")]
)
def test_number_to_str(value, expected):
    assert number_to_str(value) == expected


def test_unknown_loader_lists_the_choices(tiny):
    with pytest.raises(ValueError, match="expected one of"):
        load_benchmark("mbpp", tiny / "gsm8k" / "test.jsonl", source="x")


def test_config_loaders_are_registered():
    """Every benchmark file's loader, the code section's included (each its family's; not the training files)."""
    named = {entry["loader"] for section in ("benchmarks", "training") for entry in CONFIG[section].values()}
    named |= {entry["loader"] for name, entry in CONFIG["code"].items() if name not in CODE_TRAIN_FILES}
    assert named <= set(loaders())
