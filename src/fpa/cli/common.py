"""Arguments and helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path
from typing import Iterator, NamedTuple


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


class BenchmarkSample(NamedTuple):
    name: str
    out: str
    job: object  # fpa.provenance.record.Job of this benchmark's output
    records: list[dict]
    prompts: list[str]
    completions: list[list["Completion"]]  # fpa.generation.stops.Completion


def sample_benchmarks(args, rule: str) -> Iterator[BenchmarkSample]:
    """``n`` completions per record of each ``--benchmark``, one benchmark after the other, from
    one model load (commands ``evaluate``, ``generate``).

    Each benchmark's shards go to ``--work/<name>`` and are kept after its output is written: a
    re-run of the job (Snakemake re-runs it when any of its benchmarks changes) regenerates only
    the benchmarks whose key changed, and loads the model only if one did.
    """
    from fpa.generation.backend import LazyBackend
    from fpa.generation.shards import generate_sharded
    from fpa.generation.stops import stop_words
    from fpa.io import read_jsonl
    from fpa.provenance.record import Job, describe_inputs

    setup(args)
    shared = {key: value for key, value in args.config_json.items() if key != "benchmarks"}
    benchmarks = args.config_json.get("benchmarks")
    if not isinstance(benchmarks, dict):
        raise SystemExit("--config-json: expected a `benchmarks` object (name -> benchmark config)")
    unknown = [name for name, _, _ in args.benchmark if name not in benchmarks]
    if unknown:
        raise SystemExit(f"--benchmark {unknown[0]}: not in --config-json benchmarks ({', '.join(benchmarks)})")
    generation = shared["generation"]
    backend = LazyBackend(lambda: make_backend(generation, args.model, args.gpus))
    checkpoint = describe_inputs({"checkpoint": args.model})  # hashed once for all benchmarks
    for name, path, out in args.benchmark:
        bench = benchmarks[name]
        job = Job(rule, {**shared, "benchmark": bench, "seed": args.seed}, {"benchmark": path}, args.code,
                  described=checkpoint)
        records = read_jsonl(path)
        prompts = make_prompts(shared, [record["problem"] for record in records], args.model)
        completions = generate_sharded(
            backend, prompts, n=bench["n"], temperature=generation["temperature"],
            max_new_tokens=generation["max_new_tokens"], seed=args.seed,
            work_dir=None if args.work is None else Path(args.work) / name,
            key_parts=generation_key(job), shard_rows=args.shard_rows,
            stop_words=stop_words(shared["prompt_template"], generation["stop"]),
        )
        yield BenchmarkSample(name, out, job, records, prompts, completions)


def generation_key(job) -> dict:
    """What a job's completions depend on besides prompts and sampling: config, input hashes and the
    generation code (not the rest of the job's code: a grader edit keeps the finished shards)."""
    from fpa.generation.backend import BACKENDS
    from fpa.provenance.fingerprint import code_fingerprint

    backend_module = BACKENDS[job.config["generation"]["backend"]].split(":")[0]
    return {"rule": job.rule, "config": job.config,
            "code": code_fingerprint("fpa.generation.shards", "fpa.generation.stops", "fpa.data.prompts",
                                     backend_module),
            "inputs": {name: entry["sha256"] for name, entry in job.inputs.items()}}


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


def make_backend(generation: dict, model_dir: str, gpus: int = 1):
    """The configured generation backend on ``model_dir``, with its own options; vLLM on a job of
    more GPUs than one engine's ``tensor_parallel_size`` runs an engine per group of them."""
    from fpa.generation.backend import get_backend

    logging.getLogger(__name__).info("loading %s with the %s backend", model_dir, generation["backend"])
    if generation["backend"] != "vllm":
        return get_backend(generation["backend"], model_dir, batch_size=generation["batch_size"])
    tensor_parallel = generation["tensor_parallel_size"]
    if gpus <= tensor_parallel:
        return get_backend("vllm", model_dir, tensor_parallel_size=tensor_parallel)
    from fpa.generation.parallel import DataParallelBackend, replica_devices

    devices = replica_devices(gpus, tensor_parallel, os.environ.get("CUDA_VISIBLE_DEVICES"))
    logging.getLogger(__name__).info("%d vLLM engines (data parallel) on GPUs %s", len(devices), devices)
    return DataParallelBackend("vllm", model_dir, devices, tensor_parallel_size=tensor_parallel)


def make_prompts(config: dict, problems: list[str], model_dir: str) -> list[str]:
    """Prompts from the config slice's template (and the model's chat template if asked)."""
    from fpa.data.prompts import CHAT_DATE, build_prompts

    tokenizer = None
    if config.get("chat_template"):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return build_prompts(config["prompt_template"], problems, chat_tokenizer=tokenizer,
                         chat_date=config.get("chat_date", CHAT_DATE))
