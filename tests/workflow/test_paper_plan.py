"""``config/paper.yaml`` plans the paper's whole grid; job counts match the grid."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import (
    as_from_the_root,
    job_counts,
    plan_from_the_root,
    planned_resources,
    rule_resource_groups,
)

from fpa.planning import judge

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data"))


def _plan(tmp_path, *extra, configfile="paper.yaml"):
    return plan_from_the_root(tmp_path, ROOT / "config" / configfile, *extra)


PAPER_FIGURES = ("training_dynamics", "targeted_ablations", "lambda_sensitivity", "accuracy_curves")
PAPER_TABLES = {"main", "ablation", "lambda_validation", "lambda_test", "tuning", "three_seeds", "overhead"}


def test_paper_gridjob_counts(tmp_path):
    plan = judge([ROOT / "config" / "paper.yaml"])
    config, runs = plan.config, plan.runs
    models = len(config["models"])
    catalog_benchmarks = [b for b in config["benchmarks"].values() if b["source"] == "catalog"]
    parts = {part for bench in catalog_benchmarks for part in bench["parts"]}
    training_files = {"math_train", "math_test", "math500", "math_perturb_simple", "math_perturb_hard"}
    # seed 42, and 43/44 of DPO, Off-RL and FPA on Qwen3-4B-Base alone (the paper's three-seed table);
    # λ = 20 on Qwen3-4B-Base alone; a sweep member equal to a main run is that run (Run.trained_as)
    assert sum(len(run.seeds) for run in runs.values() if run.trained_as == run.name) == 71
    assert {(model, run.name) for (model, _), run in runs.items() if len(run.seeds) > 1} == {
        ("qwen3-4b-base", "dpo"), ("qwen3-4b-base", "offrl"), ("qwen3-4b-base", "fpa")}
    assert [model for (model, name) in runs if name == "fpa_sweep_lam20"] == ["qwen3-4b-base"]
    assert set(config["tables"]) == PAPER_TABLES
    # only the (run, seed)s a table reads are evaluated: seed 42 (the paper's single-seed tables), and
    # 43 and 44 of the three-seed table's runs
    read = {(key.model, key.method, str(seed)) for layout in plan.layouts.values()
            for key in layout.cell_keys() for seed in key.seeds}
    evaluated = len({entry for entry in read if entry[1] != "base"})
    assert evaluated == 71
    assert plan.figures.planned() == [
        (model, figure) for model in config["models"] for figure in PAPER_FIGURES
        if figure != "targeted_ablations" or model == "qwen3-4b-base"]  # its runs are Qwen3-4B-Base's alone
    curves = plan.curves()
    # Off-RL, FPA: 3 seeds on Qwen3-4B-Base, 1 on the others; Cor./Incor. Only: 1 each; base: 3 + 1 + 1
    assert len(curves) == 17
    # the figures draw only what the tables read: only what a table reads is trained
    drawn = {tuple(re.fullmatch(r"results/curves/(.+)/(.+)/(\d+)\.csv", path).groups()) for path in curves}
    assert {entry for entry in drawn if entry[1] != "base"} <= read
    trained = evaluated
    result = _plan(tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    expected = {
        "fetch_data": len(parts | training_files),
        "fetch_model": models,
        "math_train_problems": 1,
        "prepare_benchmark": len(catalog_benchmarks),
        "check_prompt_budget": models,
        "sample_offline": models,
        "build_dataset": models,
        "cache_reference": models,
        "validation_benchmark": models,
        "train": trained,
        "select_checkpoint": evaluated,  # model_selection: best validation Pass@1 of each evaluated run
        "evaluate": evaluated + models,  # every checkpoint and the base (seed 42), one model load each
        "aggregate": len(PAPER_TABLES),
        "reproduction": 1,  # the tables compare with config/paper_results.yaml
        # the paper's figures, each for the models whose runs fill its roles, and MATH500 through
        # training of the runs they draw (each run's seeds and the base model's)
        "figure": len(plan.figures.planned()),
        "curve": len(curves),
        "cost": 1,
        "all": 1,
    }
    expected["total"] = sum(expected.values())
    assert job_counts(result.stdout + result.stderr) == expected
    planned = set(re.findall(r"results/tables/([a-z_]+)\.csv", result.stdout + result.stderr))
    assert planned == PAPER_TABLES | {"cost_by_stage", "reproduction"}


SLURM_PROFILE = ROOT / "profiles" / "slurm"
SITE_SETTINGS = {"slurm_partition", "gpu_partition", "slurm_account"}


def test_slurm_profile_holds_only_site_settings():
    profile = yaml.safe_load((SLURM_PROFILE / "config.yaml").read_text())
    assert profile["executor"] == "slurm"
    assert set(profile["default-resources"]) == SITE_SETTINGS
    assert "set-resources" not in profile and "set-threads" not in profile


def test_paper_plan_on_slurm_requests_the_config_resources(tmp_path):
    """Each job planned with the SLURM profile requests its rule's ``resources`` of the config
    (schema defaults filled) and the profile's site settings, nothing else of its own: the jobs that
    ask for a GPU the profile's GPU partition, the others its CPU partition (slurm_partition)."""
    result = _plan(tmp_path, "--workflow-profile", str(SLURM_PROFILE))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    config = judge([ROOT / "config" / "paper.yaml"]).config
    site = yaml.safe_load((SLURM_PROFILE / "config.yaml").read_text())["default-resources"]
    groups = rule_resource_groups()
    jobs = [(rule, resources) for rule, resources in planned_resources(result.stdout + result.stderr)
            if rule != "all"]
    assert {rule for rule, _ in jobs} == set(job_counts(result.stdout + result.stderr)) - {"all", "total"}
    partitions = {rule: resources["slurm_partition"] for rule, resources in jobs}
    assert {rule for rule, partition in partitions.items() if partition == site["gpu_partition"]} == {
        rule for rule in partitions if config["resources"][groups[rule]]["gpu"]}
    assert set(partitions.values()) == {site["slurm_partition"], site["gpu_partition"]}
    for rule, resources in jobs:
        expected = {**site, **config["resources"][groups[rule]]}
        if expected["gpu"]:
            expected["slurm_partition"] = site["gpu_partition"]
        assert {key: resources.get(key) for key in expected} == {k: str(v) for k, v in expected.items()}, rule
        assert "gres" not in resources, rule
    train = next(resources for rule, resources in jobs if rule == "train")
    assert (train["gpu"], train["cpus_per_task"], train["mem_mb"], train["runtime"]) == ("2", "8", "256000", "2880")


def test_paper_reference_cache_runs_on_its_gpu_in_the_trainings_precision(tmp_path):
    """The cache job asks for a GPU: its command computes there (it computed on the CPU: weeks for
    12K problems x 8 samples), its forward in the training's precision (bf16 autocast) and layout (packed,
    the schema's default)."""
    config = judge([ROOT / "config" / "paper.yaml"]).config
    assert config["resources"]["cache_reference"]["gpu"] >= 1 and config["training"]["precision"] == "bf16"
    target = "results/reference/qwen3-4b-base/cache"
    result = _plan(tmp_path, "-p", "--workflow-profile", str(SLURM_PROFILE), "--cores", "8", target)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [command] = re.findall(r"^Shell command: (?:export \S+; )*python -m fpa (cache-reference .*?) > \S+ 2>&1$",
                           result.stdout + result.stderr, flags=re.M)
    argv = shlex.split(command)
    assert argv[argv.index("--device") + 1] == "cuda" and argv[argv.index("--precision") + 1] == "bf16"
    assert argv[argv.index("--weights-dtype") + 1] == "bfloat16"  # FSDP gathers the policy's weights in bf16
    assert argv[argv.index("--attention") + 1] == "packed"
    assert argv[argv.index("--dtype") + 1] == "bfloat16"  # the head's bf16 products on CUDA take z_ref so


def test_paper_training_job_launches_a_process_per_gpu(tmp_path):
    """The paper trains on 2 GPUs: one SLURM job asks for 2 GPUs and its one command starts 2 DDP
    ranks (torchrun, rendezvous on a free port), the job's 8 CPUs split 4 per rank."""
    from fpa.cli import build_parser
    from fpa.training.launch import launch_command, threads_per_process

    target = "results/train/qwen3-4b-base/fpa/42/checkpoint"
    # --cores 8: the job's own view (inside its allocation Snakemake has its cpus_per_task)
    result = _plan(tmp_path, "-p", "--workflow-profile", str(SLURM_PROFILE), "--cores", "8", target)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    text = result.stdout + result.stderr
    [(_, resources)] = [job for job in planned_resources(text) if job[0] == "train"]
    assert resources["gpu"] == "2"
    [command] = re.findall(r"^Shell command: (?:export \S+; )*python -m fpa (train .*?) > \S+ 2>&1$", text, flags=re.M)
    argv = shlex.split(command)
    args = build_parser("train").parse_args(argv)
    assert (args.processes, threads_per_process(args.threads, args.processes)) == (2, 4)
    assert "--nproc-per-node=2" in launch_command(argv, args.processes)


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"data mirror not found at {MIRROR}")
def test_paper_plan_with_the_mirror_checks_files(tmp_path):
    ok = _plan(tmp_path, "--config", f"data={{catalog: config/benchmarks.yaml, mirror: {MIRROR}}}")
    assert ok.returncode == 0, ok.stderr[-3000:]
    missing = _plan(tmp_path, "--config", f"data={{catalog: config/benchmarks.yaml, mirror: {tmp_path}}}")
    assert missing.returncode != 0
    assert "file not found in the mirror" in missing.stderr and "gsm8k/test.jsonl" in missing.stderr


def test_amc24_is_reported_missing(tmp_path):
    config = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    config["benchmarks"]["amc"]["parts"] = ["amc23", "amc24"]
    path = tmp_path / "paper-amc24.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run([sys.executable, "-m", "fpa", "check-config", str(path)], capture_output=True,
                            text=True, cwd=ROOT, timeout=120)
    assert result.returncode == 2
    assert "benchmarks.amc.parts: amc24 has no source" in result.stderr


# What common.smk runs before Snakemake builds the DAG: validation, the run grid, and the code
# fingerprint of every rule's jobs.
PARSE_TIME = """
import json, sys
from fpa.planning import judge
from fpa.grading import grader_module
from fpa.objectives import get_objective
from fpa.provenance import fingerprint
plan = judge([sys.argv[1]])
config = plan.config
closures = set()
for run in plan.runs.values():
    modules = ("fpa.training.loop", get_objective(run.objective).loss.__module__)
    fingerprint.code_fingerprint(*modules)
    closures.update(fingerprint.module_closure(*modules))
for bench in config["benchmarks"].values():
    fingerprint.code_fingerprint("fpa.cli.evaluate", grader_module(bench["grader"]))
    closures.update(fingerprint.module_closure("fpa.cli.evaluate", grader_module(bench["grader"])))
print(json.dumps({"heavy": sorted(m for m in ("torch", "transformers", "pandas")
                                  if m in sys.modules),
                  "parsed": fingerprint._imports.cache_info().misses, "modules": len(closures)}))
"""


def test_planning_imports_no_heavy_packages_and_parses_each_module_once():
    """Plan speed without a stopwatch (the timing is benchmarks/planning/plan.py): the parse-time code of
    the paper config imports neither torch, transformers nor pandas (fpa.config fills the schema's
    defaults, not Snakemake's validator, which imports pandas), and reads each module's source
    once however many rules fingerprint it."""
    result = subprocess.run([sys.executable, "-c", PARSE_TIME, str(ROOT / "config" / "paper.yaml")],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout)
    assert report["heavy"] == [], report
    assert report["parsed"] == report["modules"], report


def test_the_rlvr_comparison_plans_fpa_grpo_and_dapo_with_their_curves(tmp_path):
    """config/paper-rlvr.yaml: FPA offline, GRPO and DAPO online (rule train_online), each with its
    curve on MATH500 (and the base model's), the wall-clock figure and its time-to-accuracy table."""
    result = _plan(tmp_path, configfile="paper-rlvr.yaml")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "InputFunctionException" not in result.stderr  # rule train never tries an online run
    counts = job_counts(result.stdout + result.stderr)
    assert {rule: counts.get(rule) for rule in ("train", "train_online", "curve", "select_checkpoint", "evaluate",
                                                "figure", "figure_table", "sample_offline")} == {
        "train": 1, "train_online": 2, "curve": 4, "select_checkpoint": 3, "evaluate": 4, "figure": 1,
        "figure_table": 1, "sample_offline": 1}
    for method in ("grpo", "dapo"):
        assert f"results/train/qwen3-4b-base/{method}/42/checkpoint" in result.stdout
    assert "results/figures/paper-rlvr/qwen3-4b-base/wall_clock.md" in result.stdout


def test_toy_paper_trains_grpo_and_dapo_online_and_every_other_run_offline(tmp_path):
    result = _plan(tmp_path, configfile="toy-paper.yaml")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "InputFunctionException" not in result.stderr, result.stderr[-2000:]  # rule train never tries them
    counts = job_counts(result.stdout + result.stderr)
    # grpo and dapo are their sweeps' lr = 4e-5 members (Run.trained_as): 2 sweeps x 2 learning rates
    assert (counts["train"], counts["train_online"], counts["figure_table"]) == (67, 4, 1)


# Snakemake planning the paper grid, with the objects scanned by each full garbage collection
# once the Snakefile runs (it imports fpa.config) counted; with argv[1] == "unfrozen" the
# Snakefile's gc.freeze() does nothing.
COUNT_FULL_COLLECTIONS = """
import gc, json, runpy, sys
if sys.argv[1] == "unfrozen":
    gc.freeze = lambda: None
scanned = []
def count(phase, info):
    if phase == "start" and info["generation"] == 2 and "fpa.config" in sys.modules:
        scanned.append(sum(len(gc.get_objects(generation)) for generation in range(3)))
gc.callbacks.append(count)
sys.argv = ["snakemake", *sys.argv[2:]]
try:
    runpy.run_module("snakemake", run_name="__main__")
except SystemExit as done:
    assert not done.code, done.code
print(json.dumps(sum(scanned)))
"""


def test_planning_keeps_what_snakemake_imported_out_of_full_collections(tmp_path):
    """Plan speed without a stopwatch: Snakemake's imports, alive until it exits, are frozen when the
    Snakefile starts, so the full garbage collections of planning scan under half the objects."""
    as_from_the_root(tmp_path)
    scanned = {}
    for mode in ("frozen", "unfrozen"):
        result = subprocess.run(
            [sys.executable, "-c", COUNT_FULL_COLLECTIONS, mode, "-n", "--cores", "1", "--quiet", "--configfile",
             str(ROOT / "config" / "paper.yaml"), "-d", str(tmp_path)],
            capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert result.returncode == 0, result.stderr[-3000:]
        scanned[mode] = json.loads(result.stdout.strip().splitlines()[-1])
    assert scanned["frozen"] < 0.5 * scanned["unfrozen"], scanned


def test_planning_warns_when_the_paper_config_exceeds_the_disk_budget(tmp_path):
    """``budget.disk_gb`` below the planned disk (fpa.memory.cost): a one-line warning before any job,
    after the line that states the plan's cost (fpa.memory.summary)."""
    budget = tmp_path / "budget.yaml"
    budget.write_text("budget: {disk_gb: 100}\n")
    result = _plan(tmp_path, "--configfile", str(ROOT / "config" / "paper.yaml"), str(budget))
    assert result.returncode == 0, result.stderr[-3000:]
    [line] = [line for line in result.stderr.splitlines() if "> budget.disk_gb" in line]
    assert line.startswith("disk: ") and line.endswith("> budget.disk_gb 100 (per job family: fpa plan-memory CONFIG)")
    assert re.match(r"plan: ~[\d,]+ GB of disk and ~[\d,]+ GPU-hours in \d+ GPU jobs", result.stderr.splitlines()[1])
