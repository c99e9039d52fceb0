"""The Step-DPO validation benchmark (``fpa validation-benchmark --pairs``): the held-out pairs'
problems, once each, with their final answers, which the math grader (model selection) reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpa.cli import main
from fpa.data.step_dpo import ANSWER_GRADER, read_step_dpo, validation_problems
from fpa.grading import get_grader
from fpa.io import read_json, read_jsonl, write_jsonl
from fpa.samples.offline import hold_out

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "step_dpo" / "train.jsonl"
# 4 of the fixture's 5 problems: at least one of its two problems with two pairs is held out
FRACTION, SEED = 0.8, 42


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The CLI's splits of the fixture and the validation benchmark built from them."""
    tmp = tmp_path_factory.mktemp("stepdpo")
    config = {"dataset": {"source": "step_dpo", "seed": SEED, "validation_fraction": FRACTION},
              "prompt_template": "Q: {problem}\nA:", "chat_template": False}
    main(["step-dpo-dataset", "--pairs", str(FIXTURE), "--config-json", json.dumps(config),
          "--out-train", str(tmp / "train.jsonl"), "--out-val", str(tmp / "val.jsonl")])
    main(["validation-benchmark", "--pairs", str(FIXTURE), "--val", str(tmp / "val.jsonl"),
          "--out", str(tmp / "bench.jsonl")])
    return tmp


def test_records_are_the_held_out_problems_with_their_answers(built):
    pairs = read_step_dpo(FIXTURE)
    held_out = hold_out((pair["prompt"] for pair in pairs), FRACTION, SEED)
    records = read_jsonl(built / "bench.jsonl")
    assert [sorted(record) for record in records] == [["answer", "id", "problem"]] * len(records)
    # one record per held-out problem (two pairs of one problem give one record), the raw problem
    # text (the evaluation renders the prompt template), the pairs' final answer
    assert len(held_out) == 4 and sum(pair["prompt"] in held_out for pair in pairs) > 4
    assert {record["problem"]: record["answer"] for record in records} == {
        pair["prompt"]: pair["answer"] for pair in pairs if pair["prompt"] in held_out}
    assert len(records) == len(held_out)
    val_ids = {sample["problem_id"] for sample in read_jsonl(built / "val.jsonl")}
    assert {record["id"] for record in records} <= val_ids
    provenance = read_json(built / "bench.jsonl.prov.json")
    assert provenance["rule"] == "validation_benchmark" and list(provenance["inputs"]) == ["pairs", "val"]


def test_the_answers_grade_with_the_math_grader(built):
    records = read_jsonl(built / "bench.jsonl")
    right = [(f"The final answer is \\boxed{{{record['answer']}}}.", record["answer"]) for record in records]
    wrong = [(f"The final answer is \\boxed{{{record['answer']}1}}.", record["answer"]) for record in records]
    verdicts = get_grader(ANSWER_GRADER)(right + wrong)
    assert [correct for correct, _ in verdicts] == [True] * len(records) + [False] * len(records)


def test_pairs_that_are_not_the_datasets_are_refused(built, tmp_path):
    pairs = read_step_dpo(FIXTURE)
    val = read_jsonl(built / "val.jsonl")
    with pytest.raises(ValueError, match=r"other.jsonl: \d+ held-out pairs of the validation split are not in the "
                                         r"pairs file \(2 pairs\)"):
        validation_problems(pairs[:2], val, where="other.jsonl")
    held = {sample["problem_id"] for sample in val}
    # the second held-out pair of a problem, given another answer than its first pair's
    first, second = [index for index, pair in enumerate(pairs) if f"stepdpo-{index:05d}" in held
                     and [p["prompt"] for p in pairs].count(pair["prompt"]) == 2][:2]
    assert pairs[first]["prompt"] == pairs[second]["prompt"]
    edited = [{**pair, "answer": "6"} if index == second else pair for index, pair in enumerate(pairs)]
    with pytest.raises(ValueError, match=f"edited.jsonl: pair {second} .* answer '6' differs from "
                                         f"'{pairs[first]['answer']}'"):
        validation_problems(edited, val, where="edited.jsonl")


def test_the_cli_names_the_pairs_file(built, tmp_path, capsys):
    short = tmp_path / "short.jsonl"
    write_jsonl(short, read_step_dpo(FIXTURE)[:2])
    with pytest.raises(SystemExit):
        main(["validation-benchmark", "--pairs", str(short), "--val", str(built / "val.jsonl"),
              "--out", str(tmp_path / "bench.jsonl")])
    assert f"fpa validation-benchmark: error: {short}: 4 held-out pairs" in capsys.readouterr().err
    assert not (tmp_path / "bench.jsonl").exists()
