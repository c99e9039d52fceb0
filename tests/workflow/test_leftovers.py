"""A workflow run starts by removing what killed jobs left in the working directory (the Snakefile's
onstart hook): a dead writer's temporary and the record of an output Snakemake deleted."""

from __future__ import annotations

from pathlib import Path

from workflow_helpers import snakemake

from fpa.config import load_config_file
from fpa.io import _HOST, read_jsonl

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_removes_what_killed_jobs_left(tmp_path):
    evaluations = tmp_path / "results" / "eval" / "toy" / "fpa" / "42"
    evaluations.mkdir(parents=True)
    orphan = evaluations / "toy9.json.prov.json"
    orphan.write_text("{}")
    elsewhere = evaluations / f".toy10.json.{2 ** 40}-elsewhere.abcd1234.tmp"  # another host's: left alone
    stale = evaluations / f".toy9.json.{2 ** 40}-{_HOST}.abcd1234.tmp"  # no such pid on this host
    elsewhere.mkdir()
    stale.mkdir()
    result = snakemake(ROOT, tmp_path, ROOT / "config" / "config.yaml", "--cores", "1",
                       "results/benchmarks/toy/toy8.jsonl")
    assert "the record of an output that is gone" in result.stderr, result.stderr[-3000:]
    assert sorted(path.name for path in evaluations.iterdir()) == [elsewhere.name]
    expected = load_config_file(ROOT / "config" / "config.yaml")["benchmarks"]["toy8"]["n_problems"]
    assert len(read_jsonl(tmp_path / "results" / "benchmarks" / "toy" / "toy8.jsonl")) == expected
