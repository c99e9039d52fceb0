"""The whole DAG on the CI config, through Snakemake, in a temporary directory.

One complete run, then the properties a user relies on: every table cell explains to
files whose sha256 matches the records; a re-run schedules nothing; changing FPA's λ,
or editing FPA's objective code, re-runs only FPA's training, evaluation and the
tables; a training job killed with SIGKILL leaves no output and a re-run resumes it; the
training job on 2 gloo processes writes the checkpoint of the run's 1 process.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from workflow_helpers import (ONE_RUN_CHECKPOINT, copy_project, edited, job_counts, one_run_trained,
                              seed_toy_base_model, snakemake)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ci_run")]  # one worker builds the run


def _snakemake(project: Path, workdir: Path, *args: str, config: Path | None = None, **options):
    return snakemake(project, workdir, config or project / ".test" / "config_ci" / "config.yaml", *args, **options)


def _planned_jobs(result) -> dict[str, int]:
    jobs = job_counts(result.stdout + result.stderr)
    jobs.pop("total", None)
    return jobs


def _planned_outputs(result) -> set[str]:
    return set(re.findall(r"output: (results/\S+?)(?:,|\n)", result.stdout + result.stderr))


@pytest.fixture(scope="module")
def run(tmp_path_factory, ci_toy_base_model):
    """A copy of the project (so its code can be edited) and one complete run of the CI config, from
    its toy base model."""
    base = tmp_path_factory.mktemp("e2e")
    project = copy_project(base)
    workdir = base / "work"
    seed_toy_base_model(ci_toy_base_model, workdir)
    started = time.perf_counter()
    _snakemake(project, workdir, "--cores", "2")
    print(f"complete CI DAG in {time.perf_counter() - started:.0f} s")
    return project, workdir


def test_table_has_a_row_per_method_and_mean_std_cells(run):
    _, workdir = run
    with open(workdir / "results" / "tables" / "toy.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["row"] for row in rows] == ["base", "offrl", "fpa"]
    for row in rows:
        for column in ("toy6", "toy8", "Avg."):
            assert re.fullmatch(r"\d+\.\d\d ± \d+\.\d\d", row[column]), row
    markdown_rows = [line for line in (workdir / "results" / "tables" / "toy.md").read_text().splitlines()
                     if line.startswith("| ") and not line.startswith("| Method")]
    assert len(markdown_rows) == 3 and all(line.count("±") == 3 for line in markdown_rows)
    assert r"\pm" in (workdir / "results" / "tables" / "toy.tex").read_text()


def test_every_cell_explains_to_verified_files(run):
    project, workdir = run
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    for row in ("offrl", "fpa", "base"):
        for column in ("toy6", "toy8", "Avg."):
            result = subprocess.run([sys.executable, "-m", "fpa", "explain", "results/tables/toy.csv",
                                     "--row", row, "--col", column], cwd=workdir, env=env, capture_output=True,
                                    text=True, timeout=120)
            assert result.returncode == 0, result.stdout + result.stderr
            assert "all" in result.stdout and "files verified" in result.stdout
            stages = ["rule evaluate", "rule toy_base_model", "rule toy_benchmark"]
            if row != "base":  # the untrained model's row does not depend on the offline dataset
                stages += ["rule train", "rule build_dataset", "rule sample_offline", "rule toy_train_problems"]
            for stage in stages:
                assert stage in result.stdout, (row, column, stage)


def test_explain_detects_a_changed_file(run, tmp_path):
    project, workdir = run
    copy = tmp_path / "work"
    shutil.copytree(workdir / "results", copy / "results")
    evaluation = copy / "results" / "eval" / "toy" / "fpa" / "1" / "toy6.json"
    evaluation.write_text(evaluation.read_text().replace('"pass_at_1"', '"pass_at_1" ', 1))
    result = subprocess.run([sys.executable, "-m", "fpa", "explain", "results/tables/toy.csv", "--row", "fpa",
                             "--col", "toy6"], cwd=copy, env={**os.environ, "PYTHONPATH": str(project / "src")},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "toy6.json" in result.stderr and "MISMATCH" in result.stdout


def test_rerun_schedules_nothing(run):
    project, workdir = run
    assert _planned_jobs(_snakemake(project, workdir, "-n", "--cores", "1")) == {}


FPA_ONLY = {"train": 2, "evaluate": 2, "curve": 2, "figure": 3, "aggregate": 2, "cost": 1, "all": 1}


def test_changing_lambda_reruns_only_fpa(run, tmp_path):
    project, workdir = run
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    config["methods"]["fpa"]["params"]["lam"] = 1.0
    changed = tmp_path / "config.yaml"
    changed.write_text(yaml.safe_dump(config))
    result = _snakemake(project, workdir, "-n", "--cores", "1", config=changed)
    assert _planned_jobs(result) == FPA_ONLY
    assert all("/fpa/" in path or "tables" in path or "figures" in path for path in _planned_outputs(result))


def test_adding_a_method_adds_its_curve_without_retraining_others(run, tmp_path):
    project, workdir = run
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    config["methods"]["fpa_incor"] = {"objective": "fpa_incor"}
    changed = tmp_path / "config.yaml"
    changed.write_text(yaml.safe_dump(config))
    result = _snakemake(project, workdir, "-n", "--cores", "1", config=changed)
    assert _planned_jobs(result) == {"train": 2, "evaluate": 2, "curve": 2, "figure": 1, "aggregate": 1, "cost": 1,
                                     "all": 1}
    assert "results/figures/toy-ci/toy/accuracy_curves.png" in _planned_outputs(result)


def test_adding_a_row_to_one_table_reruns_only_that_table(run, tmp_path):
    project, workdir = run
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    config["tables"]["toy_ablation"]["rows"].insert(0, "base")
    changed = tmp_path / "config.yaml"
    changed.write_text(yaml.safe_dump(config, sort_keys=False))  # method order is the default rows' order
    result = _snakemake(project, workdir, "-n", "--cores", "1", config=changed)
    assert _planned_jobs(result) == {"aggregate": 1, "all": 1}
    assert {path.rsplit(".", 1)[0] for path in _planned_outputs(result)} == {"results/tables/toy_ablation"}


def test_ablation_table_marks_and_explains_its_cells(run):
    project, workdir = run
    markdown = (workdir / "results" / "tables" / "toy_ablation.md").read_text()
    assert "**Ablation (CI)**" in markdown and "| &emsp;**w/ FPA** |" in markdown
    assert markdown.count("**", markdown.index("| offrl")) >= 2  # one of the two rows is the column's best
    assert r"\rowcolor[gray]{0.92}" in (workdir / "results" / "tables" / "toy_ablation.tex").read_text()
    result = subprocess.run([sys.executable, "-m", "fpa", "explain", "results/tables/toy_ablation.csv", "--row", "fpa",
                             "--col", "toy6"], cwd=workdir, env={**os.environ, "PYTHONPATH": str(project / "src")},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "files verified" in result.stdout, result.stdout + result.stderr


def test_run_ends_with_figures_and_a_report_holding_them(run):
    project, workdir = run
    for name in ("training_dynamics", "prolonged_training", "accuracy_curves", "future_policy_validation",
                 "gradient_entanglement"):
        assert (workdir / "results" / "figures" / "toy-ci" / "toy" / f"{name}.png").stat().st_size > 10_000
        assert (workdir / "results" / "figures" / "toy-ci" / "toy" / f"{name}.pdf").exists()
    with open(workdir / "results" / "curves" / "toy" / "offrl" / "1.csv") as handle:
        steps = [int(row["step"]) for row in csv.DictReader(handle)]
    assert steps and steps == sorted(steps) and all(step % 2 == 0 for step in steps)  # snapshot_every: 2
    _snakemake(project, workdir, "--report", "report.html")
    report = (workdir / "report.html").read_text()
    for name in ("training_dynamics.png", "prolonged_training.png", "accuracy_curves.png",
                 "future_policy_validation.png", "gradient_entanglement.png", "toy.html", "toy_ablation.html",
                 "cost_by_stage.html"):
        assert name in report, name
    assert "Training dynamics of Off-RL and FPA" in report
    assert "problematic" not in report and "System Messages" not in report  # every caption is clean RST


def test_editing_fpa_objective_code_reruns_only_fpa(run):
    project, workdir = run
    with edited(project / "src" / "fpa" / "objectives" / "fpa.py"):
        result = _snakemake(project, workdir, "-n", "--cores", "1")
    assert _planned_jobs(result) == FPA_ONLY
    assert all("/fpa/" in path or "tables" in path or "figures" in path for path in _planned_outputs(result))


def test_every_method_trains_and_gets_a_row(run, tmp_path):
    """All registered objectives (plus the Low-LR schedule) trained through the same DAG, one seed, and
    each planned to its row of the main table. Their checkpoints are evaluated in the dry run only:
    evaluation and aggregation do not depend on the objective, and the complete run evaluates two
    methods to their rows (13 evaluate jobs were most of this test). No curves or figures (each
    method's snapshots sampled again; curves and figures of a method are
    test_adding_a_method_adds_its_curve_without_retraining_others')."""
    from fpa.objectives import OBJECTIVES

    project, workdir = run
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    for key in ("figures", "future_policy", "entanglement", "curve_benchmarks"):
        config.pop(key)
    config["tables"] = {"toy": ["toy6"]}
    config["methods"] = {name: {"objective": name} for name in OBJECTIVES}
    config["methods"]["offrl_lowlr"] = {"objective": "offrl", "training": {"lr_decay_scale": 0.8}}
    config["seeds"] = [1]
    every = tmp_path / "config.yaml"
    every.write_text(yaml.safe_dump(config))
    checkpoints = [f"results/train/toy/{method}/1/checkpoint" for method in config["methods"]]
    _snakemake(project, workdir, *checkpoints, "--cores", "2", config=every)
    for method in config["methods"]:
        with open(workdir / "results" / "train" / "toy" / method / "1" / "checkpoint" / "training_metrics.csv") as f:
            losses = [float(row["loss"]) for row in csv.DictReader(f)]
        assert losses and all(abs(loss) < float("inf") for loss in losses), method
    planned = _snakemake(project, workdir, "-n", "--cores", "1", config=every)
    assert set(_planned_jobs(planned)) == {"evaluate", "aggregate", "cost", "all"}  # everything trained
    evaluated = {path.split("/")[3] for path in _planned_outputs(planned) if path.startswith("results/eval/")}
    for method in config["methods"]:  # planned, or evaluated by the complete run under the same config
        assert method in evaluated or (workdir / "results" / "eval" / "toy" / method / "1" / "toy6.json").exists()
    assert "results/tables/toy.csv" in _planned_outputs(planned)


def test_killed_training_leaves_no_output_and_resumes(run, tmp_path):
    project, workdir = run
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    config["methods"]["fpa"]["training"] = {"epochs": 20, "checkpoint_every": 5}  # 60 steps: killed at step 5
    longer = tmp_path / "config.yaml"
    longer.write_text(yaml.safe_dump(config))
    target = "results/train/toy/fpa/1/checkpoint"
    work = workdir / "results" / "train" / "toy" / "fpa" / "1" / "work"
    assert not work.exists()  # removed once a run's checkpoint is written
    process = _snakemake(project, workdir, target, "--cores", "1", config=longer, background=True)
    deadline = time.time() + 600
    while not (work / "latest").exists():
        assert process.poll() is None, process.stdout.read()
        assert time.time() < deadline, "no training checkpoint appeared"
        time.sleep(0.05)
    pids = subprocess.run(["pgrep", "-f", f"fpa train .*--work {work.relative_to(workdir)}"],
                          capture_output=True, text=True).stdout.split()
    assert pids
    for pid in pids:
        os.kill(int(pid), signal.SIGKILL)
    output = process.communicate(timeout=300)[0]
    assert process.returncode != 0, output
    assert not (workdir / target).exists()
    rerun = _snakemake(project, workdir, target, "--cores", "1", config=longer)
    assert (workdir / target / "model.safetensors").exists()
    log = (workdir / "logs" / "train" / "toy" / "fpa" / "1.log").read_text()
    assert "resumed from" in log, rerun.stdout[-2000:]


def test_two_gloo_processes_train_the_checkpoint_of_one(run, tmp_path):
    """A training job of several processes, launched by the DAG: the CI config's Off-RL job with
    ``resources.train.processes: 2`` runs 2 gloo ranks inside the one job and writes the checkpoint
    that the complete run's 1 process wrote for the same global batch (within float tolerance).
    Only that job runs again, in a copy of the complete run."""
    project, workdir = run
    copy = tmp_path / "work"
    shutil.copytree(workdir, copy, symlinks=True)
    assert _planned_jobs(_snakemake(project, copy, "-n", "--cores", "1", ONE_RUN_CHECKPOINT)) == {}  # the CI config's
    single, single_state = one_run_trained(copy)

    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    config["resources"] = {"train": {"processes": 2, "cpus_per_task": 2}}
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump(config))
    # the target before --forcerun, which takes several values
    trained = _snakemake(project, copy, ONE_RUN_CHECKPOINT, "--cores", "2", "--forcerun", "train", config=two)
    assert _planned_jobs(trained) == {"train": 1}
    ddp, ddp_state = one_run_trained(copy)

    assert (single_state["world"], ddp_state["world"]) == (1, 2)
    assert ddp_state["summary"]["steps"] == single_state["summary"]["steps"] > 1
    assert single.keys() == ddp.keys()
    for name in single:
        torch.testing.assert_close(ddp[name], single[name], rtol=1e-4, atol=1e-5, msg=name)
