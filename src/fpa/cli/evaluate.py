"""``fpa evaluate``: Pass@1 of a checkpoint on each of its benchmarks (one model load)."""

from __future__ import annotations

from fpa.cli.common import add_benchmark_sampling, add_common, sample_benchmarks
from fpa.evaluation.evaluate import score_completions
from fpa.grading import get_grader
from fpa.io import write_json


def evaluate(args) -> None:
    for sample in sample_benchmarks(args, "evaluate"):
        bench = sample.job.config["benchmark"]
        result = score_completions(sample.records, sample.completions, n=bench["n"],
                                   grader=get_grader(bench["grader"]))
        with sample.job.output(sample.out) as tmp:
            write_json(tmp, {"seed": args.seed, **result})
        print(f"{sample.name}: Pass@1 = {result['pass_at_1']:.4f} ± {result['pass_at_1_stderr']:.4f} (SE over "
              f"problems) over {result['n_problems']} problems "
              f"x {bench['n']} samples")


def register(commands) -> None:
    parser = commands.add_parser("evaluate", help="Pass@1 of a checkpoint on its benchmarks")
    add_common(parser, threads=True, gpus=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=evaluate)
