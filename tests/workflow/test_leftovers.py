"""A workflow run starts by removing what killed jobs left in the working directory (the Snakefile's
onstart hook): a dead writer's temporary and the record of an output Snakemake deleted, and nothing
else: a finished evaluation named like a record stays."""

from __future__ import annotations

from pathlib import Path

from workflow_helpers import snakemake

from fpa.planning import judge
from fpa.io import _HOST, _MARK_TEXT, PARTIAL_MARK, read_jsonl, write_json
from fpa.provenance.record import Job, sidecar_of

ROOT = Path(__file__).resolve().parents[2]


def test_a_run_removes_what_killed_jobs_left(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # records name their outputs relative to the workflow's directory, as jobs do
    evaluations = Path("results", "eval", "toy", "fpa", "42")
    evaluations.mkdir(parents=True)
    with Job("evaluate", {}, {}).output(evaluations / "toy9.json") as tmp:
        write_json(tmp, {"pass_at_1": 0.5})
    orphan = sidecar_of(evaluations / "toy9.json")
    (evaluations / "toy9.json").unlink()  # Snakemake deleted the failed job's output, not its record
    with Job("evaluate", {}, {}).output(evaluations / "toy8.json.prov.json") as tmp:  # benchmark "toy8.json.prov"
        write_json(tmp, {"pass_at_1": 0.5})
    finished = sorted(path.name for path in evaluations.iterdir() if path != orphan)
    elsewhere = evaluations / f".toy10.json.{2 ** 40}-elsewhere.abcd1234.tmp"  # another host's: left alone
    stale = evaluations / f".toy9.json.{2 ** 40}-{_HOST}.abcd1234.tmp"  # no such pid on this host
    for temporary, output in ((elsewhere, "toy10.json"), (stale, "toy9.json")):  # as atomic_path marks them
        temporary.mkdir()
        (temporary / (output + PARTIAL_MARK)).write_text(_MARK_TEXT)
    result = snakemake(ROOT, tmp_path, ROOT / "config" / "config.yaml", "--cores", "1",
                       "results/benchmarks/toy/toy8.jsonl")
    assert "the record of an output that is gone" in result.stderr, result.stderr[-3000:]
    assert sorted(path.name for path in evaluations.iterdir()) == sorted([elsewhere.name, *finished])
    expected = judge([ROOT / "config" / "config.yaml"]).config["benchmarks"]["toy8"]["n_problems"]
    assert len(read_jsonl(tmp_path / "results" / "benchmarks" / "toy" / "toy8.jsonl")) == expected
