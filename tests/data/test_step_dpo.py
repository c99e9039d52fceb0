"""Math-Step-DPO-10K → offline dataset: groups of two, R = ±1, the documented prompt, a seeded
split by problem, one-line errors. The fixture is 7 hand-written pairs (5 problems) in the
dataset's exact schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fpa.catalog import find_entry, read_benchmarks_config
from fpa.cli import main
from fpa.data.download import fetch
from fpa.data.step_dpo import GRADE_RULE, build_step_dpo_dataset, read_step_dpo, step_prompt
from fpa.io import read_json, read_jsonl
from fpa.samples.offline import group_by_problem, hold_out
from fpa.samples.prompts import render_prompt

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "step_dpo" / "train.jsonl"
TEMPLATE = "Q: {problem}\nA:"
# The dataset card's features (hub xinlai/Math-Step-DPO-10K), in its order.
CARD_FIELDS = ["dataset", "prompt", "initial_reason_steps", "chosen", "rejected", "full_chosen", "full_rejected",
               "answer"]
# The record of fpa.samples.offline / `fpa build-dataset` (results/datasets/<model>/train.jsonl).
SAMPLE_KEYS = {"id", "problem_id", "sample_index", "prompt", "completion", "answer", "correct", "reward",
               "grade_rule", "ends_answer"}


def _build(records, fraction=0.05, seed=42):
    prompts = [render_prompt(TEMPLATE, record["prompt"]) for record in records]
    return build_step_dpo_dataset(records, prompts, validation_fraction=fraction, seed=seed)


def test_fixture_is_in_the_dataset_schema():
    records = read_step_dpo(FIXTURE)
    assert len(records) == 7
    assert all(list(record) == CARD_FIELDS for record in records)
    assert len({record["prompt"] for record in records}) == 5


def test_catalog_entry_is_the_hub_file():
    section, entry = find_entry(read_benchmarks_config(ROOT / "config" / "benchmarks.yaml"), "math_step_dpo")
    assert section == "preference" and entry["hub"] == "xinlai/Math-Step-DPO-10K"
    assert entry["sha256"] is None and entry["records"] == 10795  # not in the mirror: hashed when fetched
    assert entry["url"].startswith("https://huggingface.co/datasets/xinlai/Math-Step-DPO-10K/resolve/main/data/")


def test_hub_parquet_rows_load(tmp_path):
    """The hub stores parquet; fetch-data writes its rows as JSONL, which the loader reads as is."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = read_jsonl(FIXTURE)
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "train-00000-of-00001.parquet")
    entry = {**find_entry(read_benchmarks_config(ROOT / "config" / "benchmarks.yaml"), "math_step_dpo")[1],
             "url": f"file://{tmp_path}/train-{{shard:05d}}-of-00001.parquet", "records": len(rows)}
    assert read_step_dpo(fetch(entry, tmp_path / "out" / "train.jsonl")) == rows


def test_each_pair_is_a_group_of_chosen_plus_one_and_rejected_minus_one():
    records = read_step_dpo(FIXTURE)
    built = _build(records)
    samples = built.train + built.val
    groups = group_by_problem(samples)
    assert len(groups) == len(records) and len(samples) == 2 * len(records)
    for index, record in enumerate(records):
        chosen, rejected = groups[f"stepdpo-{index:05d}"]
        assert set(chosen) == set(rejected) == SAMPLE_KEYS
        assert chosen["ends_answer"] is rejected["ends_answer"] is False  # one step: no EOS after it
        assert (chosen["completion"], chosen["reward"], chosen["correct"]) == (record["chosen"], 1.0, True)
        assert (rejected["completion"], rejected["reward"], rejected["correct"]) == (record["rejected"], -1.0, False)
        assert chosen["prompt"] == rejected["prompt"]
        assert (chosen["sample_index"], rejected["sample_index"]) == (0, 1)
        assert chosen["id"] == f"stepdpo-{index:05d}/0" and rejected["id"] == f"stepdpo-{index:05d}/1"
        assert chosen["answer"] == record["answer"] and chosen["grade_rule"] == GRADE_RULE


def test_prompt_is_the_rendered_problem_then_the_initial_steps():
    records = read_step_dpo(FIXTURE)
    built = _build(records)
    by_id = {sample["id"]: sample for sample in built.train + built.val}
    assert by_id["stepdpo-00002/0"]["prompt"] == (
        "Q: Tom has 3 boxes of 12 pens. He gives away 10 pens. How many pens are left?\n"
        "A: Let's think step by step.\nStep 1: Tom has $3 \\times 12 = 36$ pens.\nStep 2:")
    # the completion continues the step label the prompt ends with
    assert by_id["stepdpo-00002/0"]["completion"] == " After giving away 10, he has $36-10=26$ pens."
    # a chat template's assistant header ends in a newline: nothing is inserted
    assert step_prompt("<|im_start|>assistant\n", "Step 1:") == "<|im_start|>assistant\nStep 1:"
    assert step_prompt("A:", "") == "A:"  # no initial steps (Step-DPO's train.py allows it)


def test_split_holds_out_whole_problems_with_a_seed():
    records = read_step_dpo(FIXTURE)
    built = _build(records)
    problem_of = {f"stepdpo-{i:05d}": record["prompt"] for i, record in enumerate(records)}
    train_problems = {problem_of[s["problem_id"]] for s in built.train}
    val_problems = {problem_of[s["problem_id"]] for s in built.val}
    assert len(val_problems) == 1 and len(train_problems) == 4  # 5 % of 5 problems: at least one
    assert not train_problems & val_problems
    assert built.summary == {"pairs": 7, "problems": 5, "train_problems": 4, "val_problems": 1,
                             "train_samples": len(built.train), "val_samples": len(built.val),
                             "sources": {"GSM8K": 2, "MATH": 5}}
    assert _build(records) == built
    assert _build(list(reversed(records))).summary["val_problems"] == 1
    held_out = {frozenset(hold_out([r["prompt"] for r in records], 0.05, seed)) for seed in range(10)}
    assert len(held_out) > 1  # the seed decides


def test_hold_out_ignores_input_order():
    ids = [f"p{i}" for i in range(40)]
    assert hold_out(ids, 0.1, 7) == hold_out(list(reversed(ids)), 0.1, 7)
    assert len(hold_out(ids, 0.1, 7)) == 4 and hold_out(ids, 0.0, 7) == set()
    assert len(hold_out(ids[:2], 0.05, 7)) == 1


@pytest.mark.parametrize("field, value, message", [
    ("rejected", None, "2: field 'rejected' is missing"),
    ("chosen", 3, "2: field 'chosen': expected a string, got int 3"),
    ("prompt", "  ", "2: field 'prompt': expected text"),
])
def test_bad_record_names_the_line_and_field(tmp_path, field, value, message):
    records = read_jsonl(FIXTURE)
    if value is None:
        del records[1][field]
    else:
        records[1][field] = value
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    with pytest.raises(ValueError, match=re.escape(f"{path}:{message}")):
        read_step_dpo(path)


def test_cli_writes_both_splits_with_provenance(tmp_path):
    config = {"dataset": {"source": "step_dpo", "seed": 42, "validation_fraction": 0.05},
              "prompt_template": TEMPLATE, "chat_template": False}
    train, val = tmp_path / "train.jsonl", tmp_path / "val.jsonl"
    main(["step-dpo-dataset", "--pairs", str(FIXTURE), "--config-json", json.dumps(config), "--code", "abc",
          "--out-train", str(train), "--out-val", str(val)])
    expected = _build(read_step_dpo(FIXTURE))
    assert read_jsonl(train) == expected.train and read_jsonl(val) == expected.val
    record = read_json(tmp_path / "train.jsonl.prov.json")
    assert record["rule"] == "step_dpo_dataset" and list(record["inputs"]) == ["pairs"]
    assert record["summary"] == expected.summary


def test_cli_with_chat_template_needs_the_model(tmp_path, capsys):
    config = {"dataset": {"source": "step_dpo", "seed": 42, "validation_fraction": 0.05},
              "prompt_template": TEMPLATE, "chat_template": True}
    with pytest.raises(SystemExit):
        main(["step-dpo-dataset", "--pairs", str(FIXTURE), "--config-json", json.dumps(config),
              "--out-train", str(tmp_path / "t.jsonl"), "--out-val", str(tmp_path / "v.jsonl")])
    assert "--model is required with chat_template" in capsys.readouterr().err
    assert not (tmp_path / "t.jsonl").exists()
