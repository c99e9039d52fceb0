"""``fpa curve``: accuracy through training, Pass@1 of each snapshot of a run on the curve benchmarks.

``--snapshots`` is a run's snapshot directory (``step-*/``), or one model directory (the
base model), which is the curve's step 0.

The job starts one generation engine, at the first snapshot it samples, and loads each later
snapshot's weights into it (``fpa.evaluation.sampling.job_engine``). Each snapshot is loaded at
most once and sampled on every curve benchmark; its finished shards stay in
``--work/<step>/<benchmark>``, keyed by the snapshot's hash, so a re-run after a snapshot or a
benchmark is added generates only the new (snapshot, benchmark) pairs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fpa.cli.common import add_common, add_work, sample_benchmarks
from fpa.evaluation.evaluate import score_completions
from fpa.evaluation.sampling import job_engine
from fpa.grading import get_grader
from fpa.io import write_csv
from fpa.provenance.record import Job
from fpa.training.checkpoints import snapshot_name, snapshot_steps

CURVE_FIELDS = ("step", "benchmark", "pass_at_1", "n_problems", "n")


def curve_models(snapshots: str) -> list[tuple[int, str]]:
    """(step, model directory) of each point of the curve."""
    if (Path(snapshots) / "config.json").exists():
        return [(0, snapshots)]
    return [(step, str(Path(snapshots) / snapshot_name(step))) for step in snapshot_steps(snapshots)]


def curve_rows(args, models: list[tuple[int, str]]) -> list[dict]:
    """One row per (step, benchmark) of the (step, model directory) ``models``, in their order."""
    rows = []
    benchmarks = [(name, path, None) for name, path in args.benchmark]
    engine = job_engine(args.config_json, args.gpus)
    for step, model in models:
        per_snapshot = argparse.Namespace(**{**vars(args), "model": model, "benchmark": benchmarks,
                                             "work": str(Path(args.work) / snapshot_name(step))})
        for sample in sample_benchmarks(per_snapshot, "curve", engine):
            bench = sample.job.config["benchmark"]
            result = score_completions(sample.records, sample.completions, n=bench["n"],
                                       grader=get_grader(bench["grader"]))
            rows.append({"step": step, "benchmark": sample.name, "pass_at_1": result["pass_at_1"],
                         "n_problems": result["n_problems"], "n": bench["n"]})
            print(f"step {step} {sample.name}: Pass@1 = {result['pass_at_1']:.4f}")
    return rows


def curve(args) -> None:
    rows = curve_rows(args, curve_models(args.snapshots))
    inputs = {"snapshots": args.snapshots, **dict(args.benchmark)}
    with Job("curve", {**args.config_json, "seed": args.seed}, inputs, args.code).output(args.out) as tmp:
        write_csv(tmp, CURVE_FIELDS, rows)


def add_snapshot_sampling(parser, benchmark_help: str) -> None:
    """Options of the commands that sample a run's snapshots (``curve``, ``select-checkpoint``)."""
    add_common(parser, threads=True, gpus=True)
    parser.add_argument("--snapshots", required=True, help="the run's snapshot directory (step-*/ in HF format)")
    parser.add_argument("--benchmark", nargs=2, action="append", required=True, metavar=("NAME", "FILE"),
                        help=benchmark_help)
    parser.add_argument("--seed", type=int, required=True, help="sampling seed")
    add_work(parser)


def register(commands) -> None:
    parser = commands.add_parser("curve")
    add_snapshot_sampling(parser, "a curve benchmark of the config slice's `benchmarks` and its JSONL records; "
                                  "repeat it")
    parser.add_argument("--out", required=True, help="the curve CSV (step, benchmark, pass_at_1, n_problems, n)")
    parser.set_defaults(handler=curve)
