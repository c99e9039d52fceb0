"""``fpa generate``: n completions per problem of a benchmark, without grading (rule
``generate_code``: code columns are graded by a separate CPU job, ``fpa evaluate-code``)."""

from __future__ import annotations

from fpa.cli.common import add_benchmark_sampling, add_common, sample_benchmark
from fpa.generation.shards import remove_work
from fpa.io import write_json


def generate(args) -> None:
    """Completions only (resumable from ``--work`` shards, as ``fpa evaluate`` and ``fpa sample``)."""
    job, records, prompts, completions = sample_benchmark(args, "generate_code")
    n = args.config_json["benchmark"]["n"]
    with job.output(args.out) as tmp:
        write_json(tmp, {"seed": args.seed, "n": n, "problem_ids": [record["id"] for record in records],
                         "prompts": prompts, "completions": completions})
    remove_work(args.work)
    print(f"{len(records)} problems x {n} completions")


def register(commands) -> None:
    parser = commands.add_parser("generate", help="n completions per problem of a benchmark (code columns)")
    add_common(parser, threads=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=generate)
