"""Code data: the catalog's code section, hub-only fetches, benchmark prompts, TACO/APPS problems.

All on fixture files in the upstream formats (tests/fixtures/code/mirror); no network
(the parquet path downloads from a ``file://`` URL).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from fpa.catalog import CODE_SECTION, find_entry, read_benchmarks_config
from fpa.data.benchmarks import load_benchmark
from fpa.data.download import fetch
from fpa.grading.code.livecodebench import WITH_STARTER_CODE, WITHOUT_STARTER_CODE
from fpa.grading.code.tests import MAX_TEST_BYTES, MAX_TESTS, build_code_train, make_test_spec
from fpa.io import read_jsonl, sha256_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "code" / "mirror"
CATALOG = read_benchmarks_config(ROOT / "config" / "benchmarks.yaml")
CI_CATALOG = read_benchmarks_config(ROOT / ".test" / "config_code" / "benchmarks.yaml")


def test_code_section_entries():
    code = CATALOG[CODE_SECTION]
    assert {"mbppplus", "humanevalplus", "bigcodebench", "livecodebench_v6", "taco_train", "apps_train"} <= set(code)
    for name in ("livecodebench_v6", "taco_train", "apps_train"):  # hub-only: canonical hub URL, sha256 unknown
        entry = code[name]
        assert entry["hub"] and entry["sha256"] is None, name
        assert entry["url"].startswith(f"https://huggingface.co/datasets/{entry['hub']}/resolve/"), name
    assert code["livecodebench_v6"]["url"].endswith("/test6.jsonl") and code["livecodebench_v6"]["records"] == 175
    assert find_entry(CATALOG, "livecodebench_v6")[0] == CODE_SECTION
    with pytest.raises(ValueError, match="unknown catalog entry 'nope'"):
        find_entry(CATALOG, "nope")


@pytest.mark.parametrize("name", ["mbppplus", "humanevalplus", "bigcodebench"])
def test_code_files_in_the_mirror_match_their_sha256(mirror, name):
    entry = CATALOG[CODE_SECTION][name]
    assert sha256_file(mirror / entry["path"]) == entry["sha256"]


def test_ci_catalog_pins_the_fixtures():
    for name, entry in CI_CATALOG[CODE_SECTION].items():
        assert sha256_file(FIXTURES / entry["path"]) == entry["sha256"], name
        assert len(read_jsonl(FIXTURES / entry["path"])) == entry["records"], name


def test_unpinned_hub_file_from_the_mirror_override(tmp_path, caplog):
    # the real catalog's unpinned entry, with the fixture's record count
    records = CI_CATALOG[CODE_SECTION]["livecodebench_v6"]["records"]
    entry = {**CATALOG[CODE_SECTION]["livecodebench_v6"], "records": records}
    with caplog.at_level(logging.WARNING):
        dest = fetch(entry, tmp_path / "test6.jsonl", mirror_dir=FIXTURES)
    assert dest.read_bytes() == (FIXTURES / entry["path"]).read_bytes()
    assert "sha256 not pinned" in caplog.text and sha256_file(dest) in caplog.text
    with pytest.raises(ValueError, match="mirror file not found"):
        fetch(entry, tmp_path / "again.jsonl", mirror_dir=tmp_path / "empty")
    assert not (tmp_path / "again.jsonl").exists()


def test_pinned_sha256_mismatch_fails(tmp_path):
    entry = {**CI_CATALOG[CODE_SECTION]["taco_train"], "sha256": "0" * 64}
    with pytest.raises(ValueError, match="taco_train: sha256 mismatch"):
        fetch(entry, tmp_path / "train.jsonl", mirror_dir=FIXTURES)
    assert not (tmp_path / "train.jsonl").exists()


def test_parquet_shards_become_one_jsonl(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = read_jsonl(FIXTURES / "taco" / "train.jsonl")
    for shard, part in enumerate([rows[:2], rows[2:]]):
        pq.write_table(pa.Table.from_pylist(part), tmp_path / f"train-{shard:05d}.parquet")
    entry = {"name": "taco_train", "hub": "BAAI/TACO", "path": "taco/train.jsonl", "sha256": None,
             "url": f"file://{tmp_path}/train-{{shard:05d}}.parquet", "upstream_format": "parquet", "shards": 2,
             "records": len(rows)}
    dest = fetch(entry, tmp_path / "out" / "train.jsonl")
    assert read_jsonl(dest) == rows


def test_benchmark_prompts_and_task_ids():
    mbpp = load_benchmark("mbppplus", FIXTURES / "mbppplus" / "MbppPlus-v0.2.0.jsonl", source="mbppplus")
    assert [p.id for p in mbpp] == ["Mbpp/2", "Mbpp/3", "Mbpp/4"] and all(p.answer == p.id for p in mbpp)
    assert mbpp[0].problem.startswith("Write a function to find the shared elements")
    assert "assert set(similar_elements(" in mbpp[0].problem and '"""' not in mbpp[0].problem
    lcb = {p.id: p for p in load_benchmark("livecodebench", FIXTURES / "livecodebench" / "test6.jsonl", "lcb")}
    assert lcb["fx_stdin_sum"].problem.startswith("Read a and b, print a+b.")
    assert WITHOUT_STARTER_CODE in lcb["fx_stdin_sum"].problem
    assert WITH_STARTER_CODE in lcb["fx_func_twosum"].problem and "def twoSum(self" in lcb["fx_func_twosum"].problem
    with pytest.raises(ValueError, match="unknown loader 'taco'"):
        load_benchmark("taco", FIXTURES / "taco" / "train.jsonl", "taco")


@pytest.mark.parametrize("bench, path, first_id", [
    ("bigcodebench", "tiny/bigcodebench/BigCodeBench-hf-2024-06-18.jsonl.gz", "BigCodeBench/0"),
    ("humanevalplus", "tiny/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz", "HumanEval/0"),
])
def test_tiny_mirror_prompts(mirror, bench, path, first_id):
    problems = load_benchmark(bench, mirror / path, source=bench)
    assert len(problems) == 20 and problems[0].id == first_id == problems[0].answer
    marker = "You should write self-contained code" if bench == "bigcodebench" else "def has_close_elements"
    assert marker in problems[0].problem


def test_taco_and_apps_training_problems():
    problems, summary = build_code_train({"taco_train": FIXTURES / "taco" / "train.jsonl",
                                          "apps_train": FIXTURES / "apps" / "train.jsonl"})
    assert summary == {"taco_train": {"rows": 5, "no_tests": 1, "duplicates": 0, "kept": 4},
                       "apps_train": {"rows": 2, "no_tests": 0, "duplicates": 1, "kept": 1}}
    assert [p.id for p in problems] == ["taco_train/0", "taco_train/1", "taco_train/2", "taco_train/4",
                                        "apps_train/1"]
    specs = {p.id: json.loads(p.answer) for p in problems}
    assert specs["taco_train/0"] == {"testtype": "stdin", "func_name": None,
                                     "tests": [{"input": "3\n", "output": "6\n"}, {"input": "10\n", "output": "20\n"}]}
    assert specs["taco_train/1"]["testtype"] == "functional" and specs["taco_train/1"]["func_name"] == "add"
    assert specs["taco_train/1"]["tests"][0] == {"input": "1\n2", "output": "[3]"}  # one JSON argument per line
    assert specs["taco_train/2"]["tests"][0] == {"input": "[1, 5, 2]", "output": "5"}
    assert specs["taco_train/4"]["tests"][0] == {"input": "2\n1 2", "output": "3"}  # lists of lines joined
    assert WITH_STARTER_CODE in problems[1].problem and "def add(a, b):" in problems[1].problem
    assert WITHOUT_STARTER_CODE in problems[0].problem


def test_test_spec_limits_and_errors():
    many = {"inputs": [f"{i}\n" for i in range(40)], "outputs": [f"{i}\n" for i in range(40)]}
    assert len(make_test_spec(json.dumps(many), "row")["tests"]) == MAX_TESTS
    big = {"inputs": ["x" * (100 << 10) + "\n"] * 5, "outputs": ["1\n"] * 5}  # 100 KiB each
    assert len(make_test_spec(big, "row")["tests"]) == MAX_TEST_BYTES // (100 << 10)
    huge = {"inputs": ["x" * (MAX_TEST_BYTES + 1)], "outputs": ["1"]}
    assert len(make_test_spec(huge, "row")["tests"]) == 1  # the first test is always kept
    assert make_test_spec("", "row") is None and make_test_spec({"inputs": [], "outputs": []}, "row") is None
    with pytest.raises(ValueError, match="taco row 3: input_output: 2 inputs but 1 outputs"):
        make_test_spec({"inputs": ["1", "2"], "outputs": ["1"]}, "taco row 3")
    with pytest.raises(ValueError, match="taco row 4: input_output: invalid JSON"):
        make_test_spec("{not json", "taco row 4")


def test_a_starter_code_that_is_not_text_is_refused_in_one_line(tmp_path):
    rows = read_jsonl(FIXTURES / "livecodebench" / "test6.jsonl")
    path = tmp_path / "test6.jsonl"
    path.write_text("".join(json.dumps({**row, "starter_code": 7 if i else row.get("starter_code")}) + "\n"
                            for i, row in enumerate(rows)))
    with pytest.raises(ValueError, match=rf"^{path}: {rows[1]['question_id']}: field 'starter_code': expected "
                                         "text, got int$"):
        load_benchmark("livecodebench", path, "livecodebench_v6")
