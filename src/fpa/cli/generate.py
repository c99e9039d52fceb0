"""``fpa generate``: n completions per problem of a benchmark, without grading (rule
``generate_code``: code columns are graded by a separate CPU job, ``fpa evaluate-code``)."""

from __future__ import annotations

from fpa.cli.common import add_benchmark_sampling, add_common, generation_key, make_backend, make_prompts, setup
from fpa.generation.shards import generate_sharded, remove_work
from fpa.io import read_jsonl, write_json
from fpa.provenance.record import Job


def generate(args) -> None:
    """Completions only (resumable from ``--work`` shards, as ``fpa evaluate`` and ``fpa sample``)."""
    setup(args)
    bench, generation = args.config_json["benchmark"], args.config_json["generation"]
    job = Job("generate_code", {**args.config_json, "seed": args.seed},
              {"checkpoint": args.model, "benchmark": args.benchmark}, args.code)
    records = read_jsonl(args.benchmark)
    prompts = make_prompts(args.config_json, [record["problem"] for record in records], args.model)
    completions = generate_sharded(
        make_backend(generation, args.model), prompts, n=bench["n"], temperature=generation["temperature"],
        max_new_tokens=generation["max_new_tokens"], seed=args.seed, work_dir=args.work,
        key_parts=generation_key(job), shard_rows=args.shard_rows,
    )
    with job.output(args.out) as tmp:
        write_json(tmp, {"seed": args.seed, "n": bench["n"], "problem_ids": [record["id"] for record in records],
                         "prompts": prompts, "completions": completions})
    remove_work(args.work)
    print(f"{len(records)} problems x {bench['n']} completions")


def register(commands) -> None:
    parser = commands.add_parser("generate", help="n completions per problem of a benchmark (code columns)")
    add_common(parser, threads=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=generate)
