"""``config/paper-code.yaml`` plans the paper's code grid: TACO + APPS training data, code
columns generated on the GPU and graded by evaluate_code (eval_code env), one code table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import job_counts, selections_of_trained_runs

ROOT = Path(__file__).resolve().parents[2]
PAPER_CODE = ROOT / "config" / "paper-code.yaml"


def test_paper_code_gridjob_counts(tmp_path):
    config = yaml.safe_load(PAPER_CODE.read_text())
    models, methods, seeds = len(config["models"]), len(config["methods"]), len(config["seeds"])
    # the table columns (catalog files); the validation benchmark is built per model
    benchmarks = sum(bench["source"] == "catalog" for bench in config["benchmarks"].values())
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "--configfile",
                             str(PAPER_CODE), "-d", str(tmp_path)], capture_output=True, text=True, timeout=600,
                            cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # every trained run is selected on its model's validation problems (model_selection)
    selections, trained = selections_of_trained_runs(result.stdout)
    assert set(selections) == trained and len(trained) == 12
    assert all(bench == ("val", f"results/benchmarks/validation/{snapshots.split('/')[2]}.jsonl")
               for snapshots, bench in selections.items())
    # the code table reads seed 42 (the paper's single-seed table), the three-seed table 42-44 of
    # Qwen3-4B-Base's runs
    three_seeds = len(config["tables"]["three_seeds_code"]["rows"])
    trained = models * methods + three_seeds * (seeds - 1)
    checkpoints = trained + models  # and the base models
    expected = {
        "fetch_data": benchmarks + 2,  # + taco_train, apps_train
        "fetch_model": models,
        "code_train_problems": 1,
        "prepare_benchmark": benchmarks,
        "check_prompt_budget": models,
        "sample_offline": models,
        "build_dataset": models,
        "cache_reference": models,
        "train": trained,
        "validation_benchmark": models,  # the held-out problems with their tests (model_selection)
        "select_checkpoint": trained,  # each run's best snapshot on them, graded in the sandbox
        "generate_code": checkpoints,  # every code benchmark of a checkpoint from one model load
        "evaluate_code": checkpoints * benchmarks,
        "aggregate": len(config["tables"]),
        "reproduction": 1,  # the tables compare with config/paper_results.yaml
        "cost": 1,
        "all": 1,
    }
    expected["total"] = sum(expected.values())
    assert job_counts(result.stdout + result.stderr) == expected


def test_paper_code_rules_use_the_code_env_and_threads(tmp_path):
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "64", "--configfile",
                             str(PAPER_CODE), "-d", str(tmp_path), "-p", "results/eval/qwen3-4b-base/fpa/42/bcb.json"],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    block = text.split("rule evaluate_code:")[1].split("\n\n")[0]
    assert "threads: 32" in block, block
    assert "resources/data/bigcodebench/BigCodeBench-hf-2024-06-18.jsonl.gz" in block
    assert "--workers 32" in text
    rules = (ROOT / "workflow" / "rules" / "code.smk").read_text()
    assert '"../../envs/eval_code.yaml"' in rules.split("rule evaluate_code:")[1].split("\nrule ")[0]


def test_every_run_is_selected_on_the_held_out_problems_tests(tmp_path):
    """model_selection: select_checkpoint samples each run's snapshots on the validation problems
    and grades their tests on its CPUs; the code benchmarks are generated from the selected model."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "64", "--configfile",
                             str(PAPER_CODE), "-d", str(tmp_path), "-p",
                             "results/completions/qwen3-4b-base/fpa/42/bcb.json"],
                            capture_output=True, text=True, timeout=600, cwd=ROOT)
    text = result.stdout + result.stderr
    assert result.returncode == 0, text[-3000:]
    assert ("python -m fpa validation-benchmark --problems results/problems/train.jsonl "
            "--val results/datasets/qwen3-4b-base/val.jsonl") in text
    block = text.split("rule select_checkpoint:")[1].split("\n\n")[0]
    assert "threads: 16" in block and "gpu=1" in block, block
    assert ("select-checkpoint --snapshots results/train/qwen3-4b-base/fpa/42/snapshots --checkpoint "
            "results/train/qwen3-4b-base/fpa/42/checkpoint --benchmark val "
            "results/benchmarks/validation/qwen3-4b-base.jsonl") in text
    assert '\\"grader\\": \\"code_tests\\"' in text or '"grader": "code_tests"' in text
    assert "python -m fpa generate --model results/train/qwen3-4b-base/fpa/42/selected" in text


def test_base_only_config_needs_evaluate_base():
    from fpa.errors import ConfigError
    from fpa.planning import judge_config

    config = yaml.safe_load((ROOT / ".test" / "config_code" / "config.yaml").read_text())
    config["data"]["mirror"] = str(ROOT / "tests" / "fixtures" / "code" / "mirror")
    assert judge_config(dict(config), "cfg.yaml").config["methods"] == {}
    config["evaluate_base"] = False
    with pytest.raises(ConfigError, match="cfg.yaml: methods: empty and evaluate_base is false"):
        judge_config(config, "cfg.yaml")


def test_code_benchmark_has_one_code_part():
    from fpa.errors import ConfigError
    from fpa.planning import judge_config

    config = yaml.safe_load((ROOT / ".test" / "config_code" / "config.yaml").read_text())
    config["data"]["mirror"] = str(ROOT / "tests" / "fixtures" / "code" / "mirror")
    config["benchmarks"]["lcb"]["parts"] = ["livecodebench_v6", "mbppplus"]
    with pytest.raises(ConfigError, match="benchmarks.lcb.parts: a code benchmark has exactly one part"):
        judge_config(config, "cfg.yaml")
