"""Arguments and helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import logging
from typing import Iterator

from fpa.evaluation import sampling
from fpa.evaluation.sampling import BenchmarkSample
from fpa.generation.backend import Engine


def add_common(parser: argparse.ArgumentParser, *, config: bool = True, threads: bool = False,
               gpus: bool = False) -> None:
    if config:
        parser.add_argument("--config-json", required=True, type=parse_json,
                            help="the rule's config slice as JSON (recorded in provenance)")
    parser.add_argument("--code", default=None, help="code fingerprint of the rule (recorded in provenance)")
    if threads:
        parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    if gpus:
        parser.add_argument("--gpus", type=int, default=1,
                            help="GPUs of the job: vLLM runs gpus / tensor_parallel_size engines, each on a share "
                                 "of the prompts")


def add_work(parser: argparse.ArgumentParser) -> None:
    """Options of commands that generate: where finished shards go, and their size."""
    from fpa.generation.shards import SHARD_ROWS

    parser.add_argument("--work", default=None,
                        help="directory of finished generation shards; a re-run resumes from them")
    parser.add_argument("--shard-rows", type=int, default=SHARD_ROWS,
                        help="(prompt, sample) rows per shard")


def add_benchmark_sampling(parser: argparse.ArgumentParser) -> None:
    """Options of commands that sample one checkpoint on benchmarks (``evaluate``, ``generate``)."""
    parser.add_argument("--model", required=True, help="checkpoint directory (HF format)")
    parser.add_argument("--benchmark", nargs=3, action="append", required=True, metavar=("NAME", "FILE", "OUT"),
                        help="a benchmark of the config slice's `benchmarks`, its JSONL of {id, problem, answer} "
                             "records and the output to write; repeat it for each benchmark")
    parser.add_argument("--seed", type=int, required=True, help="sampling seed")
    add_work(parser)


def sample_benchmarks(args, rule: str, engine: Engine | None = None) -> Iterator[BenchmarkSample]:
    """``fpa.evaluation.sampling.sample_benchmarks`` of a sampling command's options (``--config-json``,
    ``--benchmark``, ``--model``, ...), after the command's logging and threads are set up; ``engine``:
    the job's generation engine when it samples several checkpoints (default: a new one)."""
    setup(args)
    return sampling.sample_benchmarks(args.config_json, args.benchmark, rule, model=args.model, gpus=args.gpus,
                                      seed=args.seed, code=args.code, work=args.work, shard_rows=args.shard_rows,
                                      engine=engine)


def parse_json(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"invalid JSON ({error.msg})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def setup(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)


