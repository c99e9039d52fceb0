"""``fpa generate``: n completions per problem of each benchmark, without grading (rule
``generate_code``: code columns are graded by a separate CPU job, ``fpa evaluate-code``)."""

from __future__ import annotations

from fpa.cli.common import add_benchmark_sampling, add_common, sample_benchmarks
from fpa.generation.stops import completion_fields
from fpa.io import write_json


def generate(args) -> None:
    """Completions only (resumable from ``--work`` shards, as ``fpa evaluate`` and ``fpa sample``)."""
    for sample in sample_benchmarks(args, "generate_code"):
        n = sample.job.config["benchmark"]["n"]
        with sample.job.output(sample.out) as tmp:
            write_json(tmp, {"seed": args.seed, "n": n, "problem_ids": [record["id"] for record in sample.records],
                             "prompts": sample.prompts, **completion_fields(sample.completions)})
        print(f"{sample.name}: {len(sample.records)} problems x {n} completions")


def register(commands) -> None:
    parser = commands.add_parser("generate", help="n completions per problem of benchmarks (code columns)")
    add_common(parser, threads=True, gpus=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=generate)
