"""Arguments and helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import logging


def add_common(parser: argparse.ArgumentParser, *, config: bool = True, threads: bool = False) -> None:
    if config:
        parser.add_argument("--config-json", required=True, type=parse_json,
                            help="the rule's config slice as JSON (recorded in provenance)")
    parser.add_argument("--code", default=None, help="code fingerprint of the rule (recorded in provenance)")
    if threads:
        parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")


def add_work(parser: argparse.ArgumentParser) -> None:
    """Options of commands that generate: where finished shards go, and their size."""
    from fpa.generation.shards import SHARD_ROWS

    parser.add_argument("--work", default=None,
                        help="directory of finished generation shards; a re-run resumes from them")
    parser.add_argument("--shard-rows", type=int, default=SHARD_ROWS,
                        help="(prompt, sample) rows per shard")


def add_benchmark_sampling(parser: argparse.ArgumentParser) -> None:
    """Options of commands that sample a checkpoint on a benchmark (``evaluate``, ``generate``)."""
    parser.add_argument("--model", required=True, help="checkpoint directory (HF format)")
    parser.add_argument("--benchmark", required=True, help="JSONL of {id, problem, answer} records")
    parser.add_argument("--seed", type=int, required=True, help="sampling seed")
    add_work(parser)
    parser.add_argument("--out", required=True)


def sample_benchmark(args, rule: str):
    """(job, records, prompts, completions): ``n`` completions per record of ``args.benchmark``
    from ``args.model``, resumable from the ``--work`` shards (commands ``evaluate``, ``generate``)."""
    from fpa.generation.shards import generate_sharded
    from fpa.io import read_jsonl
    from fpa.provenance.record import Job

    setup(args)
    bench, generation = args.config_json["benchmark"], args.config_json["generation"]
    job = Job(rule, {**args.config_json, "seed": args.seed},
              {"checkpoint": args.model, "benchmark": args.benchmark}, args.code)
    records = read_jsonl(args.benchmark)
    prompts = make_prompts(args.config_json, [record["problem"] for record in records], args.model)
    completions = generate_sharded(
        make_backend(generation, args.model), prompts, n=bench["n"], temperature=generation["temperature"],
        max_new_tokens=generation["max_new_tokens"], seed=args.seed, work_dir=args.work,
        key_parts=generation_key(job), shard_rows=args.shard_rows,
    )
    return job, records, prompts, completions


def generation_key(job) -> dict:
    """What a job's completions depend on besides prompts and sampling: config, input hashes, code."""
    return {"rule": job.rule, "config": job.config, "code": job.code,
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


def make_backend(generation: dict, model_dir: str):
    """The configured generation backend on ``model_dir``, with its own options."""
    from fpa.generation.backend import get_backend

    if generation["backend"] == "vllm":
        return get_backend("vllm", model_dir, tensor_parallel_size=generation["tensor_parallel_size"])
    return get_backend(generation["backend"], model_dir, batch_size=generation["batch_size"])


def make_prompts(config: dict, problems: list[str], model_dir: str) -> list[str]:
    """Prompts from the config slice's template (and the model's chat template if asked)."""
    from fpa.data.prompts import build_prompts

    tokenizer = None
    if config.get("chat_template"):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return build_prompts(config["prompt_template"], problems, chat_tokenizer=tokenizer)
