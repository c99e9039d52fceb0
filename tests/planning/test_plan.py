"""fpa.planning.Plan and its stages: what the rules ask of a config, on the repository's toy configs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest

from fpa.figures import FIGURES
from fpa.planning.figures import figure_slice
from fpa.planning import judge
from fpa.planning.shell import shell_prefix

ROOT = Path(__file__).resolve().parents[2]
PLANTED = "a;touch INJECTED;b c$(touch X)`touch Y`'\""


@pytest.fixture(scope="module")
def toy_paper():
    return judge([ROOT / "config" / "toy-paper.yaml"])


@pytest.fixture(scope="module")
def default():
    return judge([ROOT / "config" / "config.yaml"])


def test_run_patterns_split_the_runs_into_online_and_offline(toy_paper):
    online, offline = toy_paper.train.run_pattern(online=True), toy_paper.train.run_pattern(online=False)
    names = {name for _, name in toy_paper.runs}
    assert {name for name in names if re.fullmatch(online, name)} == set(toy_paper.online_runs) != set()
    assert {name for name in names if re.fullmatch(offline, name)} == names - set(toy_paper.online_runs)
    # an online run's prefix is no online run: "grpo_lr_lr4e-05" is online, "grpo_x" is not
    assert re.fullmatch(offline, "grpo_x") and not re.fullmatch(offline, "grpo")


def test_final_output_lists_tables_curves_figures_and_cost(default):
    outputs = default.final_output()
    tables = [path for path in outputs if path.startswith("results/tables/") and "cost_by_stage" not in path]
    assert len(tables) == 4 * len(default.config["tables"])
    assert [path for path in outputs if "cost_by_stage" in path] == [
        "results/tables/cost_by_stage.csv", "results/tables/cost_by_stage.md", "results/tables/cost_by_stage.html"]
    # the curves the planned figures draw: here every snapshotting run's seeds, and the base model's (step 0)
    snapshotting = [run for run in default.runs.values() if run.training["snapshot_every"]]
    runs = {path for path in default.curves() if "/base/" not in path}
    assert len(runs) == sum(len(run.seeds) for run in snapshotting) > 0
    assert {path for path in default.curves() if "/base/" in path} == {
        f"results/curves/toy/base/{seed}.csv" for seed in default.config["seeds"]}
    assert len(outputs) == len(set(outputs))


def test_table_evals_read_every_seed_of_every_cell(default):
    table = next(iter(default.config["tables"]))
    evals = default.tables.evals(SimpleNamespace(table=table))
    layout = default.layouts[table]
    assert len(evals) == len({(key, seed) for key in layout.cell_keys() for seed in key.seeds})
    assert all(re.fullmatch(r"results/eval/[^/]+/[^/]+/\d+/[^/]+\.json", path) for path in evals)


def test_figure_params_are_the_figure_slice(toy_paper):
    figures = toy_paper.figures
    assert figures.planned()
    for model, name in figures.planned():
        wildcards = SimpleNamespace(model=model, figure=name)
        expected = figure_slice(FIGURES[name], toy_paper.config, toy_paper.runs, model)
        assert json.loads(figures.config_json(wildcards)) == expected
        assert figures.inputs(wildcards) is figures.inputs(wildcards)  # computed once


def test_benchmark_file_by_source(default):
    config = default.config
    config_benchmarks = dict(config["benchmarks"])
    try:
        config["benchmarks"] = {"v": {"source": "validation"}, "f": {"source": "file", "path": PLANTED},
                                "t": {"source": "toy"}, "c": {"source": "catalog"}}
        assert default.benchmark_file("v", "m1") == "results/benchmarks/validation/m1.jsonl"
        assert default.benchmark_file("f") == "results/benchmarks/file/f.jsonl"  # validated by its own job
        assert default.benchmark_file("t") == "results/benchmarks/toy/t.jsonl"
        assert default.benchmark_file("c") == "results/benchmarks/catalog/c.jsonl"
    finally:
        config["benchmarks"] = config_benchmarks


def test_shell_fragments_keep_config_strings_one_argument(default):
    wildcards = SimpleNamespace(model="toy")
    input_ = SimpleNamespace(benchmarks=[PLANTED, "b.jsonl"], model=PLANTED, reference=PLANTED)
    output = ["results/eval/toy/fpa/42/x.json", "results/eval/toy/fpa/42/y.json"]
    assert shlex.split(default.sampling_args(wildcards, input_, output)) == [
        "--benchmark", "x", PLANTED, output[0], "--benchmark", "y", "b.jsonl", output[1]]
    assert shlex.split(default.dataset.model_option(wildcards, input_)) == ["--model", PLANTED]
    assert shlex.split(default.train.reference_option(wildcards, input_)) == ["--reference", PLANTED]
    assert default.dataset.model_option(wildcards, SimpleNamespace()) == ""


def test_shell_prefix_quotes_the_checkout(tmp_path):
    basedir = tmp_path / PLANTED
    prefix = shell_prefix(basedir).format()  # Snakemake formats the prefix once
    words = shlex.split(prefix)
    assert words[:2] == ["export", f"PYTHONPATH={basedir / 'src'}:${{PYTHONPATH:-}};"]
