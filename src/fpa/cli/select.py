"""``fpa select-checkpoint``: the run's snapshot or final checkpoint with the best validation
Pass@1 (``fpa.evaluation.selection``), linked into ``--out`` for the evaluation of the run.

Every candidate is sampled like a point of the accuracy curve (``fpa curve``): its finished
shards stay in ``--work/<step>/``, so a re-run after a new snapshot generates only that one.

A code dataset's validation problems (grader ``code_tests``: the answer is the problem's test
spec) are graded here too, in the sandbox with the training reward's limits, on the job's CPUs:
one job per run, rather than a generate and a grading job per candidate. The sandbox mode and
its memory bound are recorded with the selection, as ``evaluate-code`` records them.
"""

from __future__ import annotations

from fpa.cli.curve import CURVE_FIELDS, add_snapshot_sampling, curve_models, curve_rows
from fpa.grading import code_graders
from fpa.io import read_json
from fpa.provenance.record import Job


def select_checkpoint(args) -> None:
    from fpa.evaluation.selection import link_tree, select_step

    if len(args.benchmark) != 1:
        raise SystemExit(f"--benchmark: expected the one selection benchmark, got {len(args.benchmark)}")
    final_step = read_json(f"{args.checkpoint}/training_state.json")["summary"]["steps"]
    models = dict(curve_models(args.snapshots))
    models[final_step] = args.checkpoint  # a snapshot at the final step holds the same weights
    rows = curve_rows(args, sorted(models.items()))
    step = select_step([(row["step"], row["pass_at_1"]) for row in rows])
    [best] = [row for row in rows if row["step"] == step]
    inputs = {"snapshots": args.snapshots, "checkpoint": args.checkpoint, **dict(args.benchmark)}
    job = Job("select_checkpoint", {**args.config_json, "seed": args.seed}, inputs, args.code)
    selected = {"step": step, "final_step": final_step, "benchmark": best["benchmark"], "pass_at_1": best["pass_at_1"]}
    candidates = [{field: row[field] for field in CURVE_FIELDS} for row in rows]
    with job.output(args.out, directory=True, selected=selected, candidates=candidates,
                    **sandbox_record(args.config_json["benchmarks"][args.benchmark[0][0]]["grader"])) as tmp:
        link_tree(models[step], tmp)
    print(f"selected step {step} of {final_step}: {best['benchmark']} Pass@1 = {best['pass_at_1']:.4f}")


def sandbox_record(grader: str) -> dict:
    """How the candidates' programs ran (code graders only): the sandbox mode and memory bound."""
    if grader not in code_graders():
        return {}
    from fpa.grading.code import sandbox_mode
    from fpa.sandbox import memory_bound

    return {"sandbox": sandbox_mode(), "sandbox_aggregate_bound": memory_bound()}


def register(commands) -> None:
    parser = commands.add_parser("select-checkpoint")
    add_snapshot_sampling(parser, "the selection benchmark of the config slice's `benchmarks` and its JSONL records")
    parser.add_argument("--checkpoint", required=True, help="the run's final checkpoint (HF format)")
    parser.add_argument("--out", required=True, help="the selected model directory (hard links)")
    parser.set_defaults(handler=select_checkpoint)
