"""Code commands: ``evaluate-code`` (grade the completions of ``fpa generate`` in the
sandbox: Pass@1) and ``code-train`` (TACO + APPS training problems with their tests)."""

from __future__ import annotations

import argparse
import functools

from fpa.cli.common import add_common, setup
from fpa.grading.code.tests import MAX_TESTS, build_code_train
from fpa.evaluation.evaluate import score_completions
from fpa.generation.stops import read_completions
from fpa.grading import get_grader
from fpa.grading.code import sandbox_mode
from fpa.io import read_json, read_jsonl, write_json, write_jsonl
from fpa.provenance.record import Job
from fpa.sandbox import memory_bound


def evaluate_code(args) -> None:
    setup(args)
    bench = args.config_json["benchmark"]
    records = read_jsonl(args.benchmark)
    generated = read_json(args.completions)
    ids = [record["id"] for record in records]
    if generated["problem_ids"] != ids:
        raise ValueError(f"{args.completions}: problem_ids do not match the benchmark {args.benchmark} "
                         f"({len(generated['problem_ids'])} vs {len(ids)} problems)")
    grader = functools.partial(get_grader(bench["grader"]), data_path=args.tasks, workers=args.workers)
    result = score_completions(records, read_completions(generated, args.completions), n=bench["n"], grader=grader)
    job = Job("evaluate_code", {**args.config_json, "seed": args.seed},
              {"completions": args.completions, "benchmark": args.benchmark, "tasks": args.tasks}, args.code)
    with job.output(args.out, sandbox=sandbox_mode(), sandbox_aggregate_bound=memory_bound()) as tmp:
        write_json(tmp, {"seed": args.seed, **result})
    print(f"Pass@1 = {result['pass_at_1']:.4f} over {result['n_problems']} problems x {bench['n']} samples")


def _source_path(text: str) -> tuple[str, str]:
    source, sep, path = text.partition("=")
    if not sep or not source or not path:
        raise argparse.ArgumentTypeError(f"expected SOURCE=PATH, got {text!r}")
    return source, path


def code_train(args) -> None:
    setup(args)
    files = dict(args.files)
    problems, summary = build_code_train(files)
    job = Job("code_train_problems", {"recipe": "TACO + APPS train, de-duplicated by statement",
                                      "max_tests": MAX_TESTS}, files, args.code)
    job.extra["summary"] = summary
    with job.output(args.out) as tmp:
        write_jsonl(tmp, [problem.to_dict() for problem in problems])
    print(f"{len(problems)} training problems: {summary}")


def register(commands) -> None:
    parser = commands.add_parser("evaluate-code")
    add_common(parser)
    parser.add_argument("--completions", required=True, help="output of `fpa generate`")
    parser.add_argument("--benchmark", required=True, help="the prepared benchmark records")
    parser.add_argument("--tasks", required=True, help="the benchmark's task file (tests) the grader reads")
    parser.add_argument("--seed", type=int, required=True, help="sampling seed (recorded)")
    parser.add_argument("--workers", type=int, default=2, help="grading threads (one sandboxed process each)")
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=evaluate_code)

    parser = commands.add_parser("code-train")
    parser.add_argument("files", nargs="+", type=_source_path, help="SOURCE=PATH, in priority order")
    parser.add_argument("--code", default=None)
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=code_train)
