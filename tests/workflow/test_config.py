"""Config validation: the schema matches the registry, and bad configs fail in one line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fpa.config.schema import load_schema
from fpa.errors import ConfigError
from fpa.objectives import OBJECTIVES
from fpa.planning import judge, judge_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = [ROOT / "config" / "config.yaml", ROOT / ".test" / "config_ci" / "config.yaml",
           *sorted((ROOT / "config").glob("toy-*.yaml"))]


def test_objective_online_and_grader_enums_are_the_registries():
    from fpa.grading import GRADERS
    from fpa.online import ONLINE_METHODS

    schema = load_schema()
    method = schema["properties"]["methods"]["additionalProperties"]["properties"]
    assert method["objective"]["enum"] == sorted(OBJECTIVES)
    assert method["online"]["enum"] == sorted(ONLINE_METHODS)
    assert not set(OBJECTIVES) & set(ONLINE_METHODS)  # a run's objective names one or the other
    grader = schema["properties"]["benchmarks"]["additionalProperties"]["properties"]["grader"]
    assert grader["enum"] == sorted(GRADERS)


def test_the_schema_file_writes_no_registrys_names():
    """The file names the owner of each set of choices (x-enum-from: a registry, a tuple of fpa.precision), never
    its names: adding a member edits no schema, and a format is spelled in fpa.precision alone."""
    from fpa.config.schema import SCHEMA_PATH

    text = SCHEMA_PATH.read_text()
    assert re.findall(r"enum: \[[^]]*\b(?:offrl|grpo|mbppplus|vllm)\b", text) == []
    assert set(re.findall(r'x-enum-from: "([\w.:]+)"', text)) == {
        "fpa.objectives:OBJECTIVES", "fpa.online:ONLINE_METHODS", "fpa.grading:GRADERS",
        "fpa.generation.backend:BACKENDS", "fpa.precision:BODY_FORMATS", "fpa.precision:HEAD_PRODUCTS",
        "fpa.precision:GATHER_FORMATS"}


def test_every_schema_property_has_description_and_objects_are_closed():
    def walk(node, path):
        if not isinstance(node, dict):
            return
        if node.get("type") == "object" and "properties" in node:
            assert node.get("additionalProperties") is not None, f"{path}: additionalProperties unset"
        for key, sub in node.get("properties", {}).items():
            assert "description" in sub or "$ref" in sub, f"{path}.{key}: no description"
            walk(sub, f"{path}.{key}")
        for key in ("additionalProperties", "items"):
            walk(node.get(key), f"{path}.{key}")
        for key, sub in node.get("$defs", {}).items():
            walk(sub, f"$defs.{key}")

    walk(load_schema(), "config")


def test_default_prompt_is_the_papers_and_paper_config_uses_it():
    from fpa.samples.prompts import PAPER_MATH_TEMPLATE

    schema = load_schema()
    model = schema["properties"]["models"]["additionalProperties"]["properties"]
    assert model["prompt_template"]["default"] == PAPER_MATH_TEMPLATE
    paper = judge([ROOT / "config" / "paper.yaml"]).config
    assert {m["prompt_template"] for m in paper["models"].values()} == {PAPER_MATH_TEMPLATE}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_configs_validate(path):
    assert judge([path]).runs


def _base() -> dict:
    return yaml.safe_load((ROOT / ".test" / "config_ci" / "config.yaml").read_text())


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda c: c["methods"].update(bogus={"objective": "nope"}), "methods.bogus.objective: expected one of"),
        (lambda c: c["methods"]["fpa"]["params"].update(lam=-1), "methods.fpa.params.lam: expected number >= 0"),
        (lambda c: c.update(seeds=[1, "two"]), "seeds.1: expected integer, got 'two'"),
        (lambda c: c["benchmarks"].update(extra={"source": "file", "path": "missing/bench.jsonl"}),
         "benchmarks.extra.path: file not found: missing/bench.jsonl"),
        (lambda c: c["training"].update(lr="fast"), "training.lr: expected number, got 'fast'"),
        (lambda c: c.update(typo=1), "cfg.yaml: typo: unknown key; expected one of"),
        (lambda c: c["methods"]["fpa"]["params"].update(lamda=1), "methods.fpa.params.lamda: unknown parameter"),
        (lambda c: c["methods"]["fpa"].update(training={"lr": -1}), "methods.fpa.training: lr: expected number > 0"),
        (lambda c: c["tables"].update(t=["nope"]), "tables.t.columns: unknown benchmark 'nope'"),
        (lambda c: c.update(resources={"train": {"gpus": 2}}), "resources.train.gpus: unknown key; expected one of"),
        (lambda c: c.update(resources={"trian": {}}), "resources.trian: unknown key; expected one of"),
        (lambda c: c.update(resources={"train": {"gpu": 2, "processes": 2, "cpus_per_task": 2}}),
         "resources.train.processes: a GPU job runs one process per GPU (gpu: 2); set processes only with gpu: 0"),
        (lambda c: c.update(resources={"train": {"processes": 4, "cpus_per_task": 2}}),
         "resources.train.cpus_per_task: expected >= the job's 4 processes (a CPU each), got 2"),
        (lambda c: c.update(resources={"evaluate": {"processes": 2}}),
         "resources.evaluate.processes: only rule train runs several processes"),
        (lambda c: c.update(resources={"train": {"processes": 0}}), "resources.train.processes: expected number >= 1"),
        (lambda c: c.update(generation={"backend": "vllm", "tensor_parallel_size": 2}, resources={"evaluate": {"gpu": 3}}),
         "resources.evaluate.gpu: expected a multiple of generation.tensor_parallel_size (2), got 3"),
        (lambda c: c["training"].update(threads=4), "training.threads: unknown key"),
        (lambda c: c.update(model_selection={"benchmark": "val"}),
         "model_selection.benchmark: unknown benchmark 'val'; expected one of ['toy6', 'toy8']"),
        (lambda c: c.update(model_selection={"bench": "toy6"}), "model_selection: 'benchmark' is a required property"),
        (lambda c: (c.update(model_selection={"benchmark": "toy6"}), c["training"].update(snapshot_every=0)),
         "model_selection: run 'offrl' of model 'toy' takes no snapshots (training.snapshot_every: 0)"),
        (lambda c: (c.update(model_selection={"benchmark": "toy6"}),
                    c["methods"]["fpa"].update(training={"snapshot_every": 0})),
         "model_selection: run 'fpa' of model 'toy' takes no snapshots (training.snapshot_every: 0)"),
        (lambda c: c["methods"].update(both={"objective": "offrl", "online": "grpo"}),
         "methods.both: expected exactly one of 'objective' (an offline objective) or 'online'"),
        (lambda c: c["methods"].update(grpo={"online": "ppo"}), "methods.grpo.online: expected one of ['dapo', 'grpo']"),
        (lambda c: c["methods"].update(grpo={"online": "grpo", "params": {"group": 4}}),
         "methods.grpo.params.group: unknown parameter of grpo"),
        (lambda c: c["methods"].update(dapo={"online": "dapo", "params": {"batch_prompts": 6, "mini_batch_prompts": 4}}),
         "methods.dapo.params.mini_batch_prompts: expected a divisor of batch_prompts 6, got 4"),
        (lambda c: c["methods"].update(grpo={"online": "grpo", "params": {"num_generations": 1}}),
         "methods.grpo.params.num_generations: expected an integer >= 2, got 1"),
    ],
)
def test_malformed_config_fails_with_one_line(mutate, expected):
    config = _base()
    mutate(config)
    with pytest.raises(ConfigError) as info:
        judge_config(config, "cfg.yaml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("cfg.yaml: ")
    assert expected in message, message


def test_sweep_expands_to_named_runs():
    config = _base()
    config["methods"]["fpa"]["sweep"] = {"lam": [0.5, 1]}
    runs = judge_config(config, "cfg.yaml").runs
    assert {("toy", "fpa_lam0.5"), ("toy", "fpa_lam1")} <= set(runs)
    assert runs[("toy", "fpa_lam0.5")].params["lam"] == 0.5


def test_model_overrides_take_precedence():
    config = _base()
    config["models"]["toy"]["training"] = {"lr": 0.5}
    config["models"]["toy"]["params"] = {"fpa": {"lam": 7.0}}
    config["methods"]["offrl"]["training"] = {"lr": 0.25}
    runs = judge_config(config, "cfg.yaml").runs
    assert runs[("toy", "fpa")].params["lam"] == 7.0
    assert runs[("toy", "fpa")].training["lr"] == 0.5
    assert runs[("toy", "offrl")].training["lr"] == 0.25


def test_a_rules_resources_override_its_defaults_key_by_key():
    defaults = judge_config(_base(), "cfg.yaml").config["resources"]
    config = _base()
    config["resources"] = {"train": {"mem_mb": 64000, "gpu": 1}}
    resources = judge_config(config, "cfg.yaml").config["resources"]
    assert resources["train"] == {**defaults["train"], "mem_mb": 64000, "gpu": 1}
    assert resources["evaluate"] == defaults["evaluate"]
    assert set(defaults["train"]) == {"mem_mb", "runtime", "cpus_per_task", "gpu", "nodes"}


def test_snakemake_rejects_bad_config_before_any_job(tmp_path):
    config = _base()
    config["methods"]["fpa"]["params"]["lam"] = -1
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(ROOT / "Snakefile"),
         "--configfile", str(bad), "-d", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if "config error" in line]
    assert lines and "methods.fpa.params.lam: expected number >= 0.0, got -1" in lines[0], result.stderr
    assert not (tmp_path / "work" / "results").exists()


def test_a_training_jobs_processes_are_its_gpus_or_its_cpu_processes():
    from fpa.resources import job_processes

    assert job_processes({"gpu": 2, "cpus_per_task": 8}) == 2
    assert job_processes({"gpu": 0, "processes": 2}) == 2
    assert job_processes({"gpu": 0}) == 1


def test_a_tied_sweep_key_sets_every_named_param_to_each_value():
    config = _base()
    config["methods"]["kto_lam"] = {"objective": "kto", "label": "KTO", "sweep": {"lam_w=lam_l": [0.5, 2]}}
    config["tables"]["tuning"] = {"columns": ["toy6"], "rows": ["kto_lam"], "group_by": "sweep"}
    plan = judge_config(config, "cfg.yaml")
    runs = plan.runs
    assert [(runs[("toy", name)].params["lam_w"], runs[("toy", name)].params["lam_l"])
            for name in ("kto_lam_lam_w-lam_l0.5", "kto_lam_lam_w-lam_l2")] == [(0.5, 0.5), (2, 2)]
    [block] = plan.layouts["tuning"].blocks
    assert block.title == "KTO — λ_w=λ_l" and [row.label for row in block.rows] == ["λ_w=λ_l = 0.5", "λ_w=λ_l = 2"]


def test_a_sweep_member_equal_to_a_main_run_is_that_run():
    """toy-paper: the tuning grids' members at the main tables' settings read the main runs' files."""
    from fpa.config.runs import Run

    assert Run("alone", "offrl", {}, {}).trained_as == "alone"  # a run is its own training unless shared
    plan = judge([ROOT / "config" / "toy-paper.yaml"])
    runs = plan.runs
    shared = {name: run.trained_as for (_, name), run in runs.items() if run.trained_as != name}
    assert shared == {"fpa_sweep_lam5": "fpa", "dpo_lr_lr0.0002": "dpo", "dpo_beta_beta0.1": "dpo",
                      "rpo_alpha_alpha4": "rpo", "dpop_lam_lam_dpop50": "dpop", "kto_lam_lam_w-lam_l0.5": "kto",
                      "kto_lam_lam_w-lam_l1.0": "kto_beta_beta0.3", "apo_beta2_beta21.0": "apo", "offrl_lr_lr0.0002": "offrl",
                      "offrl_rs_scale_reward_incorrect-0.5": "offrl_rs", "offrl_kl_tau_tau0.004": "offrl_kl",
                      "grpo_lr_lr4e-05": "grpo", "dapo_lr_lr4e-05": "dapo"}  # online runs share alike
    tuning = plan.layouts["toy_paper_tuning"]
    rows = {row.key: row for block in tuning.blocks for row in block.rows}
    assert rows["dpo_beta_beta0.1"].label == "β = 0.1" and rows["dpo_beta_beta0.1"].dagger
    assert {key.method for cell in rows["dpo_beta_beta0.1"].cells for key in cell} == {"dpo"}
    assert {key.method for cell in rows["dpo_beta_beta0.05"].cells for key in cell} == {"dpo_beta_beta0.05"}
