"""Cost by stage from Snakemake benchmark records: attribution to runs and stages, sums, and the
records of other experiments left out."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fpa.aggregation.cost import SHARED, cost_by_stage, read_job_cost, select_costs
from fpa.io import read_json

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _record(root: Path, relative: str, wall: float, cpu: float, rss: float | str) -> Path:
    path = root / "logs" / "benchmarks" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{wall}\t0:00:01\t{rss}\t1\t1\t1\t0\t0\t50\t{cpu}\n")
    return path


def _records(root: Path) -> list[Path]:
    return [
        _record(root, "toy_base_model/toy.tsv", 300, 590, 900),
        _record(root, "sample_offline/toy.tsv", 60, 110, 800),
        _record(root, "build_dataset/toy.tsv", 1, 1, 100),
        _record(root, "cache_reference/toy.tsv", 10, 12, 700),
        _record(root, "train/toy/fpa/42.tsv", 120, 118, 1200),
        _record(root, "train/toy/fpa_long/42.tsv", 999, 999, 999),  # another experiment's run
        _record(root, "evaluate/toy/fpa/42.tsv", 50, 49, 600),
        _record(root, "curve/toy/fpa/42.tsv", 40, 39, 650),
        _record(root, "evaluate/toy/base/42.tsv", 30, 29, "-"),
        _record(root, "figure/toy-ci/toy/training_dynamics.tsv", 2, 2, 200),
    ]


def test_costs_sum_per_run_and_stage_and_skip_other_experiments(tmp_path):
    costs = [read_job_cost(path) for path in _records(tmp_path)]
    assert costs[4].rule == "train" and costs[4].wildcards == ("toy", "fpa", "42")
    selected = select_costs(costs, models=["toy"], methods=["base", "fpa"], seeds=[42])
    assert {c.rule for c in selected} == {"toy_base_model", "sample_offline", "build_dataset", "cache_reference",
                                          "train", "evaluate", "curve"}
    assert all("fpa_long" not in c.wildcards for c in selected)
    table = cost_by_stage(selected).set_index(["method", "stage"])
    assert table.loc[(SHARED, "data generation"), "wall_s"] == 61
    assert table.loc[(SHARED, "data generation"), "jobs"] == 2
    assert table.loc[(SHARED, "data generation"), "max_rss_mb"] == 800
    assert table.loc[("fpa", "evaluation"), "cpu_s"] == 88  # evaluate + curve
    assert table.loc[("fpa", "evaluation"), "max_rss_mb"] == 650
    assert math.isnan(table.loc[("base", "evaluation"), "max_rss_mb"])


def test_a_file_outside_the_benchmark_tree_or_not_a_benchmark_is_named(tmp_path):
    stray = tmp_path / "elsewhere.tsv"
    stray.write_text(HEADER)
    with pytest.raises(ValueError, match="elsewhere.tsv: expected a file under logs/benchmarks"):
        read_job_cost(stray)
    bad = tmp_path / "logs" / "benchmarks" / "train" / "toy" / "fpa" / "1.tsv"
    bad.parent.mkdir(parents=True)
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match="1.tsv: expected a Snakemake benchmark TSV"):
        read_job_cost(bad)


def test_cli_writes_the_table_with_provenance_of_every_record(tmp_path):
    _records(tmp_path)
    config = '{"models": ["toy"], "methods": ["base", "fpa"], "seeds": ["42"]}'
    subprocess.run([sys.executable, "-m", "fpa", "cost", "--config-json", config, "--out-csv", "cost.csv",
                    "--out-md", "cost.md", "--out-html", "cost.html"], cwd=tmp_path, check=True, capture_output=True)
    table = pd.read_csv(tmp_path / "cost.csv")
    assert set(table["stage"]) == {"base model", "data generation", "reference cache", "training", "evaluation"}
    inputs = read_json(tmp_path / "cost.csv.prov.json")["inputs"]
    assert "benchmark:logs/benchmarks/train/toy/fpa/42.tsv" in inputs
    assert not any("fpa_long" in name or "figure" in name for name in inputs)
    assert "| toy | fpa | 42 | training | 1 | 120.0 | 118.0 | 1200 |" in (tmp_path / "cost.md").read_text()
    html = (tmp_path / "cost.html").read_text()
    assert "<td>training</td>" in html and "<td>118.0</td>" in html


def test_cpu_seconds_are_the_ones_the_command_logged(tmp_path):
    """Snakemake samples CPU time every 0.5 s, then every 30 s: the exact figure is the usage line a
    real ``fpa`` command writes last to the rule's log (stderr), the last of several (DDP ranks)."""
    from fpa.provenance.record import USAGE_PREFIX

    bench = _record(tmp_path, "toy_benchmark/toy8.tsv", 5, 0.25, 100)
    log = tmp_path / "logs" / "toy_benchmark" / "toy8.log"
    log.parent.mkdir(parents=True)
    with open(log, "w") as handle:
        subprocess.run([sys.executable, "-m", "fpa", "toy-problems", "--split", "test", "--n", "3", "--n-operands",
                        "4", "--seed", "1", "--out", str(tmp_path / "toy8.jsonl"), "--code", "x"],
                       stdout=handle, stderr=subprocess.STDOUT, check=True)
    [usage] = [line for line in log.read_text().splitlines() if line.startswith(USAGE_PREFIX)]
    logged = float(usage.split('"cpu_s": ')[1].split(",")[0])
    assert logged > 0 and read_job_cost(bench).cpu_s == logged
    with open(log, "a") as handle:
        handle.write(USAGE_PREFIX + '{"cpu_s": 42.5, "gpu_s": 0.0, "gpus": 0, "wall_s": 40.0}\n')
    assert read_job_cost(bench).cpu_s == 42.5
    assert read_job_cost(bench).cpu_log == str(log)
    log.write_text("a log without a usage line\n")
    assert read_job_cost(bench).cpu_s == 0.25  # Snakemake's sample, the only figure there is
