"""The fast tier's one end-to-end run: the CI config cut to one method, one seed, one epoch and
one benchmark (``one_run_config``), through Snakemake from the toy base model (built by its rule once
per test run, fixture ``ci_toy_base_model``) to the table.

It catches, on every change, what only the whole DAG shows: a rule whose inputs, outputs or
command no longer fit the next rule, a command-line flag a rule passes that ``fpa`` no longer
takes, a record that ``fpa explain`` cannot follow, an output that changes on a re-run. The slow
tier's tests/workflow/test_e2e.py runs the whole CI config (every figure, both methods, two
seeds) and checks what it re-runs after each kind of change.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys

import pytest
from workflow_helpers import copy_project, job_counts, one_run_config, seed_toy_base_model, snakemake


@pytest.mark.cpu_budget(600)  # the toy base model's SFT (fixture ci_toy_base_model, once per run) is most of it
def test_one_run_goes_from_the_base_model_to_a_table_whose_cells_explain(tmp_path, ci_toy_base_model):
    project = copy_project(tmp_path)
    workdir = tmp_path / "work"
    seed_toy_base_model(ci_toy_base_model, workdir)
    config = one_run_config(project, {"cpus_per_task": 2}, tmp_path / "one.yaml")
    snakemake(project, workdir, config, "--cores", "2")

    with open(workdir / "results" / "tables" / "toy.csv") as handle:
        rows = {row["row"]: row for row in csv.DictReader(handle)}
    assert set(rows) == {"base", "offrl"}
    assert all(re.fullmatch(r"\d+\.\d\d", row["toy6"]) for row in rows.values()), rows  # one seed: no spread
    explained = subprocess.run([sys.executable, "-m", "fpa", "explain", "results/tables/toy.csv", "--row", "offrl",
                                "--col", "toy6"], cwd=workdir, env={**os.environ, "PYTHONPATH": str(project / "src")},
                               capture_output=True, text=True, timeout=120)
    assert explained.returncode == 0 and "files verified" in explained.stdout, explained.stdout + explained.stderr
    for stage in ("rule evaluate", "rule train", "rule build_dataset", "rule sample_offline", "rule toy_base_model"):
        assert stage in explained.stdout, stage
    assert job_counts(snakemake(project, workdir, config, "-n", "--cores", "1").stdout) == {}
