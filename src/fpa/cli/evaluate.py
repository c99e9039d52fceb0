"""``fpa evaluate``: Pass@1 of a checkpoint on a benchmark file."""

from __future__ import annotations

from fpa.cli.common import add_benchmark_sampling, add_common, sample_benchmark
from fpa.evaluation.evaluate import score_completions
from fpa.generation.shards import remove_work
from fpa.grading import get_grader
from fpa.io import write_json


def evaluate(args) -> None:
    job, records, _, completions = sample_benchmark(args, "evaluate")
    bench = args.config_json["benchmark"]
    result = score_completions(records, completions, n=bench["n"], grader=get_grader(bench["grader"]))
    with job.output(args.out) as tmp:
        write_json(tmp, {"seed": args.seed, **result})
    remove_work(args.work)  # finished shards are not needed once the output exists
    print(f"Pass@1 = {result['pass_at_1']:.4f} over {result['n_problems']} problems x {bench['n']} samples")


def register(commands) -> None:
    parser = commands.add_parser("evaluate", help="Pass@1 of a checkpoint on a benchmark")
    add_common(parser, threads=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=evaluate)
