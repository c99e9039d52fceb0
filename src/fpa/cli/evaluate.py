"""``fpa evaluate``: Pass@1 of a checkpoint on each of its benchmarks (one model load).

A broken benchmark fails alone: every benchmark's records are checked before the model
loads (a records file that cannot be graded fails the job before any generation), and a
benchmark whose grading still fails is reported after the others are graded and written.
The job then fails, and Snakemake removes its outputs, but every benchmark's completions
stay in ``--work``: the re-run after the fix generates nothing it already generated (and
loads no model if nothing is left to generate), so one bad benchmark costs its checkpoint's
other benchmarks a re-grade, not their GPU time.
"""

from __future__ import annotations

import logging

from fpa.cli.common import add_benchmark_sampling, add_common, sample_benchmarks
from fpa.data.validate import RECORD_FIELDS
from fpa.samples.rows import read_records
from fpa.evaluation.evaluate import score_completions
from fpa.grading import get_grader
from fpa.io import write_json


def evaluate(args) -> None:
    for _, path, _ in args.benchmark:
        read_records(path, RECORD_FIELDS)
    failed = []
    for sample in sample_benchmarks(args, "evaluate"):
        bench = sample.job.config["benchmark"]
        try:
            result = score_completions(sample.records, sample.completions, n=bench["n"],
                                       grader=get_grader(bench["grader"]))
        except Exception as error:  # any grader failure: the benchmarks after it are still graded
            logging.getLogger(__name__).exception("%s: grading failed", sample.name)
            failed.append(f"{sample.name} ({type(error).__name__}: {error})")
            continue
        with sample.job.output(sample.out) as tmp:
            write_json(tmp, {"seed": args.seed, **result})
        print(f"{sample.name}: Pass@1 = {result['pass_at_1']:.4f} ± {result['pass_at_1_stderr']:.4f} (SE over "
              f"problems) over {result['n_problems']} problems "
              f"x {bench['n']} samples")
    if failed:
        raise ValueError(f"grading failed for {len(failed)} of {len(args.benchmark)} benchmarks: "
                         f"{'; '.join(failed)} (the completions of every benchmark are kept in --work)")


def register(commands) -> None:
    parser = commands.add_parser("evaluate")
    add_common(parser, threads=True, gpus=True)
    add_benchmark_sampling(parser)
    parser.set_defaults(handler=evaluate)
