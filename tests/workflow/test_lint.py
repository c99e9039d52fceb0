"""The workflow passes Snakemake's linter and snakefmt, and plans the default DAG."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_snakemake_lint_passes():
    result = _run(sys.executable, "-m", "snakemake", "--lint")
    assert result.returncode == 0 and "good condition" in result.stdout + result.stderr, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("snakefmt") is None, reason="snakefmt not installed")
def test_snakefmt_check_passes():
    result = _run("snakefmt", "--check", "Snakefile", "workflow/rules")
    assert result.returncode == 0, result.stdout + result.stderr


def test_default_dag_plans_every_stage(tmp_path):
    result = _run(sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-d", str(tmp_path),
                  "--configfile", str(ROOT / "config" / "config.yaml"))
    assert result.returncode == 0, result.stderr
    for rule, count in {"toy_base_model": 1, "sample_offline": 1, "build_dataset": 1, "cache_reference": 1,
                        "train": 6, "evaluate": 9, "curve": 9, "entanglement": 3, "figure": 4, "aggregate": 1,
                        "cost": 1}.items():
        assert any(line.split() == [rule, str(count)] for line in result.stdout.splitlines()), (rule, result.stdout)


def test_model_selection_adds_one_selection_job_per_run(tmp_path):
    result = _run(sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "-d", str(tmp_path),
                  "--configfile", str(ROOT / "config" / "config.yaml"),
                  "--config", 'model_selection={"benchmark": "toy8"}')
    assert result.returncode == 0, result.stderr
    for rule, count in {"select_checkpoint": 6, "train": 6, "evaluate": 9}.items():
        assert any(line.split() == [rule, str(count)] for line in result.stdout.splitlines()), (rule, result.stdout)
    evaluations = [line for line in result.stdout.splitlines()
                   if "python -m fpa evaluate --model results/train" in line]
    assert len(evaluations) == 6 and all("/selected " in line for line in evaluations), evaluations
