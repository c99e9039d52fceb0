"""The math path of the DAG through Snakemake (.test/config_math), in a temporary directory.

Catalog files fetched from the tiny data mirror and checked against their sha256,
catalog benchmarks pooled into table columns, the math grader, then the table and the
explanation of a cell back to the mirror files; and the 12K MATH training problems of
the tiny mirror. The toy base model (no method trained on it) stands in for a real one:
the scores are not checked, the pipeline is.
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time

import pytest
import yaml
from workflow_helpers import MIRROR, ROOT, TINY_MIRROR_RUN, copy_project, seed_toy_base_model, snakemake

from fpa.grading.math import RULES

CONFIG = ROOT / ".test" / "config_math" / "config.yaml"
COLUMNS = ["gsm8k", "math500", "aime24"]
pytestmark = [*TINY_MIRROR_RUN, pytest.mark.xdist_group("math_e2e_run")]  # one worker builds the run


@pytest.fixture(scope="module")
def run(tmp_path_factory, ci_toy_base_model):
    """A copy of the project and one complete run of the math CI config (mirror path made absolute),
    from the CI toy base model (the same model: the job's params are the CI config's)."""
    base = tmp_path_factory.mktemp("math_e2e")
    project = copy_project(base)
    config = yaml.safe_load(CONFIG.read_text())
    config["data"]["mirror"] = str(MIRROR / "tiny")
    config_path = base / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    workdir = base / "work"
    seed_toy_base_model(ci_toy_base_model, workdir)
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    started = time.perf_counter()
    snakemake(project, workdir, config_path, "--cores", "2")
    print(f"complete math CI DAG in {time.perf_counter() - started:.0f} s")
    return project, workdir, env


def test_table_has_the_benchmark_columns(run):
    _, workdir, _ = run
    with open(workdir / "results" / "tables" / "math.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["row"] for row in rows] == ["base"]
    for row in rows:
        for column in (*COLUMNS, "Avg."):
            assert re.fullmatch(r"\d+\.\d\d", row[column]), row  # one seed: mean only


def test_evaluations_are_graded_by_math_verify(run):
    _, workdir, _ = run
    decided = set()
    for column in COLUMNS:
        result = json.loads((workdir / "results" / "eval" / "toy" / "base" / "1" / f"{column}.json").read_text())
        assert result["n"] == 2 and result["n_problems"] == 20
        assert len(result["completions"]) == 20 and all(len(row) == 2 for row in result["completions"])
        rules = {rule for row in result["grade_rules"] for rule in row}
        assert rules <= set(RULES), (column, rules)
        decided |= rules
    # some answer boxed, so a rule of the math grader's own decided it (every grader says no_boxed)
    assert decided - {"no_boxed"}, decided
    # one job evaluated all columns; each keeps its shards for a re-run after one column changes
    work = workdir / "results" / "eval" / "toy" / "base" / "1" / "work"
    assert sorted(path.name for path in work.iterdir()) == sorted(COLUMNS)


def test_the_12k_training_problems_of_the_tiny_mirror(run, tmp_path):
    """``dataset.source: math12k``: MATH train + (MATH test - MATH500), as a target of its own
    (the toy model never answers a MATH problem, so its offline dataset would be empty)."""
    project, _, env = run
    config = yaml.safe_load(CONFIG.read_text())
    config["data"]["mirror"] = str(MIRROR / "tiny")
    config["dataset"]["source"] = "math12k"
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    workdir = tmp_path / "work"
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile"), "-d", str(workdir),
                             "--cores", "2", "results/problems/train.jsonl", "--configfile", str(config_path)],
                            env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    problems = [json.loads(line) for line in (workdir / "results" / "problems" / "train.jsonl").open()]
    math500 = {json.loads(line)["unique_id"] for line in (MIRROR / "tiny" / "math500" / "test.jsonl").open()}
    assert len(problems) == 40  # 20 MATH train + 20 MATH test, none of them among the 20 of tiny MATH500
    assert {p["source"] for p in problems} == {"math_train", "math_test"}
    assert not math500 & {p["id"] for p in problems}
    assert all(p["answer"] for p in problems)
    record = json.loads((workdir / "results" / "problems" / "train.jsonl.prov.json").read_text())
    assert record["rule"] == "math_train_problems" and set(record["inputs"]) >= {"math_train", "math_test"}


def test_a_cell_explains_to_the_mirror_files(run):
    _, workdir, env = run
    result = subprocess.run([sys.executable, "-m", "fpa", "explain", "results/tables/math.csv", "--row", "base",
                             "--col", "math500"], cwd=workdir, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "files verified" in result.stdout
    for stage in ("rule evaluate", "rule prepare_benchmark", "rule fetch_data", "rule toy_base_model"):
        assert stage in result.stdout, stage
    assert "math500/test.jsonl" in result.stdout
