"""``fpa evaluate``: Pass@1 of a checkpoint on a benchmark file."""

from __future__ import annotations

from fpa.cli.common import add_benchmark_sampling, add_common, generation_key, make_backend, make_prompts, setup
from fpa.evaluation.evaluate import evaluate_records
from fpa.generation.shards import remove_work
from fpa.grading import get_grader
from fpa.io import read_jsonl, write_json
from fpa.provenance.record import Job


def evaluate(args) -> None:
    setup(args)
    bench, generation = args.config_json["benchmark"], args.config_json["generation"]
    job = Job("evaluate", {**args.config_json, "seed": args.seed},
              {"checkpoint": args.model, "benchmark": args.benchmark}, args.code)
    records = read_jsonl(args.benchmark)
    prompts = make_prompts(args.config_json, [record["problem"] for record in records], args.model)
    result = evaluate_records(
        make_backend(generation, args.model), records, prompts, n=bench["n"],
        temperature=generation["temperature"], max_new_tokens=generation["max_new_tokens"], seed=args.seed,
        grader=get_grader(bench["grader"]), work_dir=args.work, key_parts=generation_key(job),
        shard_rows=args.shard_rows,
    )
    with job.output(args.out) as tmp:
        write_json(tmp, {"seed": args.seed, **result})
    remove_work(args.work)  # finished shards are not needed once the output exists
    print(f"Pass@1 = {result['pass_at_1']:.4f} over {result['n_problems']} problems x {bench['n']} samples")


def register(commands) -> None:
    parser = commands.add_parser("evaluate", help="Pass@1 of a checkpoint on a benchmark")
    add_common(parser, threads=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=evaluate)
