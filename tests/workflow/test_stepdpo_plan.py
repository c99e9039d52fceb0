"""``config/paper-stepdpo.yaml`` plans the Step-DPO table: the dataset is built from the
Math-Step-DPO-10K file (no sampling), everything downstream as in the main grid. The pairs are
not in the shared mirror: planning with it fails naming the file; a mirror that has them plans."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from workflow_helpers import job_counts, plan_from_the_root, selections_of_trained_runs

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "config" / "paper-stepdpo.yaml"
MIRROR = Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data"))
FIXTURE = ROOT / "tests" / "fixtures" / "step_dpo" / "train.jsonl"


def _plan(workdir, *extra):
    return plan_from_the_root(workdir, CONFIG, *extra)


def test_stepdpo_job_counts(tmp_path):
    config = yaml.safe_load(CONFIG.read_text())
    methods, seeds = len(config["methods"]), len(config["seeds"])
    catalog = [bench for bench in config["benchmarks"].values() if bench["source"] == "catalog"]
    parts = {part for bench in catalog for part in bench["parts"]}
    rows = config["tables"]["stepdpo"]["rows"]
    assert [row if isinstance(row, str) else row["run"] for row in rows][:3] == ["base", "dpo", "offrl"]
    result = _plan(tmp_path, "-p")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # every trained run is selected on the model's validation problems (model_selection)
    selections, trained = selections_of_trained_runs(result.stdout)
    assert set(selections) == trained and len(trained) == methods * seeds
    assert set(selections.values()) == {("val", "results/benchmarks/validation/qwen3-4b-base.jsonl")}
    expected = {
        "fetch_data": len(parts) + 1,  # + math_step_dpo
        "fetch_model": 1,
        "prepare_benchmark": len(catalog),
        "step_dpo_dataset": 1,  # instead of math_train_problems, sample_offline and build_dataset
        "cache_reference": 1,
        "train": methods * seeds,
        "validation_benchmark": 1,  # the held-out problems with their answers (model_selection)
        "select_checkpoint": methods * seeds,  # each run's best snapshot on them
        "evaluate": (methods + 1) * seeds,
        "aggregate": 1,
        "reproduction": 1,  # the table compares with config/paper_results.yaml
        "cost": 1,
        "all": 1,
    }
    expected["total"] = sum(expected.values())
    assert job_counts(result.stdout + result.stderr) == expected


def test_stepdpo_rule_reads_the_catalog_file_with_the_models_prompt(tmp_path):
    result = _plan(tmp_path, "-p", "results/datasets/qwen3-4b-base/train.jsonl")
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    assert "python -m fpa step-dpo-dataset --pairs resources/data/step_dpo/train.jsonl  --config-json" in text
    assert "Solve this math problem step by step." in text and "--model" not in text  # no chat template


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"data mirror not found at {MIRROR}")
def test_stepdpo_plan_with_a_mirror_needs_the_pairs_there(tmp_path):
    missing = _plan(tmp_path, "--config", f"data={{catalog: config/benchmarks.yaml, mirror: {MIRROR}}}")
    assert missing.returncode != 0
    assert (f"dataset.source: math_step_dpo: file not found in the mirror: {MIRROR}/step_dpo/train.jsonl"
            in missing.stderr)
    # the shared mirror's files plus the pairs (the fixture stands in for the real file)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    for entry in MIRROR.iterdir():
        (mirror / entry.name).symlink_to(entry)
    (mirror / "step_dpo").mkdir()
    shutil.copy(FIXTURE, mirror / "step_dpo" / "train.jsonl")
    workdir = tmp_path / "run"
    workdir.mkdir()
    ok = _plan(workdir, "--config", f"data={{catalog: config/benchmarks.yaml, mirror: {mirror}}}")
    assert ok.returncode == 0, ok.stderr[-3000:]
    assert job_counts(ok.stdout + ok.stderr)["step_dpo_dataset"] == 1


def test_every_run_is_selected_on_the_held_out_problems(tmp_path):
    """model_selection plans select_checkpoint for every run, on the validation benchmark built from
    the pairs file and the model's validation split, and the evaluation samples the selected model."""
    result = _plan(tmp_path, "-p", "results/eval/qwen3-4b-base/fpa/42/gsm8k.json")
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    assert ("python -m fpa validation-benchmark --pairs resources/data/step_dpo/train.jsonl "
            "--val results/datasets/qwen3-4b-base/val.jsonl") in text
    assert ("select-checkpoint --snapshots results/train/qwen3-4b-base/fpa/42/snapshots --checkpoint "
            "results/train/qwen3-4b-base/fpa/42/checkpoint --benchmark val "
            "results/benchmarks/validation/qwen3-4b-base.jsonl") in text
    assert "python -m fpa evaluate --model results/train/qwen3-4b-base/fpa/42/selected" in text


def test_validation_benchmark_is_graded_as_the_answers():
    from fpa.planning import judge_config
    from fpa.errors import ConfigError

    config = yaml.safe_load(CONFIG.read_text())
    config["benchmarks"]["val"]["grader"] = "toy"
    with pytest.raises(ConfigError, match="cfg.yaml: benchmarks.val.grader: a validation benchmark is graded as its "
                                          "dataset \\(step_dpo\\): expected 'math', got 'toy'"):
        judge_config(config, "cfg.yaml")
