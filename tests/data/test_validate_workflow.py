"""A `source: file` benchmark goes through its own validation job: evaluation reads the validated
records, and a bad file fails that small job (naming file and line) before any other job starts."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GOOD = [{"id": "q1", "problem": "1 + 2 = ?", "answer": "3"}, {"id": "q2", "problem": "2 + 2 = ?", "answer": "4"}]


def _config(tmp_path, rows) -> Path:
    """The CI config, evaluating the base model only, on a toy benchmark and a user's file."""
    mine = tmp_path / "my benchmark.jsonl"  # a space: the path reaches the shell quoted
    mine.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = yaml.safe_load((ROOT / ".test" / "config_ci" / "config.yaml").read_text())
    config["benchmarks"] = {"toy6": config["benchmarks"]["toy6"],
                            "mine": {"source": "file", "path": str(mine), "n": 1, "grader": "toy", "records": 2}}
    config.update(tables={"toy": ["toy6", "mine"]}, methods={}, evaluate_base=True, figures={},
                  curve_benchmarks=[], seeds=[1])
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _snakemake(tmp_path, config, *args):
    command = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path / "work"),
               *args, "--configfile", str(config)]
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "PATH": path}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)


def test_evaluation_reads_the_validated_records(tmp_path):
    result = _snakemake(tmp_path, _config(tmp_path, GOOD), "-n", "-p")
    assert result.returncode == 0, result.stderr
    evaluate = next(line for line in result.stdout.splitlines() if "python -m fpa evaluate " in line)
    assert "--benchmark mine results/benchmarks/file/mine.jsonl results/eval/toy/base/1/mine.json" in evaluate
    validate = next(line for line in result.stdout.splitlines() if "python -m fpa validate-benchmark" in line)
    assert f"'{tmp_path / 'my benchmark.jsonl'}'" in validate


@pytest.mark.slow
def test_a_bad_user_benchmark_fails_its_validation_job_before_any_evaluate_job(tmp_path):
    rows = [GOOD[0], {"id": "q2", "problem": "2 + 2 = ?"}]
    result = _snakemake(tmp_path, _config(tmp_path, rows), "-c1", "results/eval/toy/base/1/toy6.json")
    assert result.returncode != 0
    assert "Error in rule validate_benchmark" in result.stdout + result.stderr
    log = (tmp_path / "work" / "logs" / "validate_benchmark" / "mine.log").read_text()
    mine = tmp_path / "my benchmark.jsonl"
    assert (f"fpa validate-benchmark: error: {mine}:2: field 'answer' is missing; expected the fields "
            "['id', 'problem', 'answer'], got ['id', 'problem']") in log
    # validated first (Priority.INPUT_CHECKS): no job had started, not even the base model's SFT
    assert not (tmp_path / "work" / "logs" / "evaluate").exists()
    assert not (tmp_path / "work" / "logs" / "toy_base_model").exists()
