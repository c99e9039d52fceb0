"""Model selection's config rules: the selection benchmark is graded in the job that samples (the
code benchmarks' own graders read a task file and are refused; a code dataset's validation
problems carry their tests and are accepted), and a selected run never stops on validation loss."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fpa.planning import judge_config
from fpa.config.graders import reads_task_file
from fpa.errors import ConfigError
from fpa.grading import GRADERS
from fpa.grading.code import code_benches

ROOT = Path(__file__).resolve().parents[2]
CODE_MIRROR = ROOT / "tests" / "fixtures" / "code" / "mirror"


def _toy() -> dict:
    config = yaml.safe_load((ROOT / ".test" / "config_ci" / "config.yaml").read_text())
    config["model_selection"] = {"benchmark": "toy6"}
    return config


def _code() -> dict:
    """The paper's code config on the fixture mirror (TACO, APPS, MBPP+, LiveCodeBench)."""
    config = yaml.safe_load((ROOT / "config" / "paper-code.yaml").read_text())
    config["data"]["mirror"] = str(CODE_MIRROR)
    del config["benchmarks"]["bcb"]
    for table in config["tables"].values():
        table["columns"] = [column for column in table["columns"] if column != "bcb"]
        del table["paper_results"]  # the paper's cells name the BCB column
    return config


def test_only_the_code_benchmarks_own_graders_read_a_task_file():
    assert [grader for grader in GRADERS if reads_task_file(grader)] == code_benches()


def test_a_code_datasets_validation_problems_select_the_runs():
    config = judge_config(_code(), "cfg.yaml").config
    assert config["benchmarks"]["val"]["grader"] == "code_tests" and config["model_selection"] == {"benchmark": "val"}


@pytest.mark.parametrize("where", ["model_selection", "curve_benchmarks"])
def test_a_benchmark_graded_from_its_task_file_is_refused(where):
    config = _code()
    if where == "model_selection":
        config["model_selection"] = {"benchmark": "mbppplus"}
        key = "model_selection.benchmark"
    else:
        config["curve_benchmarks"] = ["mbppplus"]
        key = "curve_benchmarks"
    with pytest.raises(ConfigError, match=f"cfg.yaml: {key}: 'mbppplus' is graded by 'mbppplus', which reads its "
                                          "benchmark's task file"):
        judge_config(config, "cfg.yaml")


def test_a_code_validation_benchmark_is_graded_by_the_tests():
    config = _code()
    config["benchmarks"]["val"]["grader"] = "livecodebench"
    with pytest.raises(ConfigError, match=r"cfg.yaml: benchmarks.val.grader: a validation benchmark is graded as its "
                                          r"dataset \(taco_apps\): expected 'code_tests', got 'livecodebench'"):
        judge_config(config, "cfg.yaml")


@pytest.mark.parametrize("level", ["training", "method"])
def test_selection_refuses_early_stopping_on_loss(level):
    config = _toy()
    if level == "training":
        config["training"]["early_stopping_patience"] = 3
    else:
        config["methods"]["fpa"]["training"] = {"early_stopping_patience": 2}
    with pytest.raises(ConfigError, match="cfg.yaml: model_selection: run '(offrl|fpa)' of model 'toy' stops early on "
                                          r"validation loss \(training.early_stopping_patience: [23]\); expected 0"):
        judge_config(config, "cfg.yaml")


def test_early_stopping_on_loss_where_a_config_asks_for_it():
    config = _toy()
    config["model_selection"] = None
    config["training"]["early_stopping_patience"] = 3
    assert judge_config(config, "cfg.yaml").config["training"]["early_stopping_patience"] == 3


@pytest.mark.parametrize("name", ["paper.yaml", "paper-code.yaml", "paper-stepdpo.yaml", "paper-rlvr.yaml"])
def test_paper_configs_select_on_accuracy_and_never_stop_on_loss(name):
    config = yaml.safe_load((ROOT / "config" / name).read_text())
    assert config["model_selection"] == {"benchmark": "val"}
    assert config["benchmarks"]["val"]["source"] == "validation"
    assert config["training"]["early_stopping_patience"] == 0 and config["training"]["snapshot_every"] > 0


def test_a_code_validation_column_is_sampled_and_graded_in_one_job():
    """A table column on the code validation problems goes to rule evaluate (one job per checkpoint,
    the model's own records), not to generate_code + evaluate_code, whose task file it has none of."""
    from types import SimpleNamespace

    config = _code()
    config["tables"]["code"]["columns"] = ["mbppplus", "val", "lcb"]
    plan = judge_config(config, "cfg.yaml")
    assert plan.code_benches == ["mbppplus", "lcb"] and plan.eval_benches == ["val"]
    assert plan.evaluate.records(SimpleNamespace(model="qwen3-4b-base")) == [
        "results/benchmarks/validation/qwen3-4b-base.jsonl"]
