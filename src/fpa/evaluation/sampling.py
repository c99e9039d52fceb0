"""Sampling a checkpoint on its benchmarks: the prompts of a config slice, n completions of each
record from one model load, resumable through generation shards keyed by what they depend on."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, NamedTuple, Sequence

from fpa.generation.backend import BACKENDS, Engine
from fpa.generation.model_len import job_max_model_len
from fpa.generation.parallel import make_backend
from fpa.generation.shards import generate_sharded
from fpa.generation.stops import Completion, stop_words
from fpa.io import read_jsonl
from fpa.provenance.fingerprint import code_fingerprint
from fpa.provenance.record import Job, describe_inputs
from fpa.samples.prompts import CHAT_DATE, build_prompts


class BenchmarkSample(NamedTuple):
    name: str
    out: str
    job: object  # fpa.provenance.record.Job of this benchmark's output
    records: list[dict]
    prompts: list[str]
    completions: list[list[Completion]]


def job_engine(config: dict, gpus: int) -> Engine:
    """The one generation engine of a sampling job of config slice ``config``, for each checkpoint it
    samples (``fpa curve``: every snapshot of a run)."""
    return Engine(lambda model, **options: make_backend(config["generation"], model, gpus, **options))


def sample_benchmarks(config: dict, requested: Sequence[tuple[str, str, str | None]], rule: str, *, model: str,
                      gpus: int, seed: int, code: str | None, work: str | None,
                      shard_rows: int, engine: Engine | None = None) -> Iterator[BenchmarkSample]:
    """``n`` completions per record of each requested (name, records file, output) benchmark of the
    config slice ``config``, one benchmark after the other, from one load of ``model`` (commands
    ``evaluate``, ``generate``, ``curve``, ``future-policy``) into ``engine`` (default: a new one;
    ``fpa curve`` passes its job's, which is built once and then reloads each snapshot's weights).

    Each benchmark's shards go to ``work/<name>`` and are kept after its output is written: a
    re-run of the job (Snakemake re-runs it when any of its benchmarks changes) regenerates only
    the benchmarks whose key changed, and loads the model only if one did.
    """
    shared = {key: value for key, value in config.items() if key != "benchmarks"}
    benchmarks = config.get("benchmarks")
    if not isinstance(benchmarks, dict):
        raise SystemExit("--config-json: expected a `benchmarks` object (name -> benchmark config)")
    unknown = [name for name, _, _ in requested if name not in benchmarks]
    if unknown:
        raise SystemExit(f"--benchmark {unknown[0]}: not in --config-json benchmarks ({', '.join(benchmarks)})")
    generation = shared["generation"]
    records = {path: read_jsonl(path) for _, path, _ in requested}
    prompts = {path: make_prompts(shared, [record["problem"] for record in rows], model)
               for path, rows in records.items()}
    max_model_len = job_max_model_len(generation, model, [p for some in prompts.values() for p in some])
    backend = (engine or job_engine(config, gpus)).on(
        model, **({} if max_model_len is None else {"max_model_len": max_model_len}))
    checkpoint = describe_inputs({"checkpoint": model})  # hashed once for all benchmarks
    for name, path, out in requested:
        bench = benchmarks[name]
        job = Job(rule, {**shared, "benchmark": bench, "seed": seed}, {"benchmark": path}, code, described=checkpoint)
        completions = generate_sharded(
            backend, prompts[path], n=bench["n"], temperature=generation["temperature"],
            max_new_tokens=generation["max_new_tokens"], seed=seed,
            work_dir=None if work is None else Path(work) / name,
            key_parts=generation_key(job), shard_rows=shard_rows,
            stop_words=stop_words(shared["prompt_template"], generation["stop"]),
        )
        yield BenchmarkSample(name, out, job, records[path], prompts[path], completions)


def generation_key(job) -> dict:
    """What a job's completions depend on besides prompts and sampling: config, input hashes and the
    generation code (not the rest of the job's code: a grader edit keeps the finished shards)."""
    backend_module = BACKENDS[job.config["generation"]["backend"]].split(":")[0]
    return {"rule": job.rule, "config": job.config,
            "code": code_fingerprint("fpa.generation.shards", "fpa.generation.stops", "fpa.samples.prompts",
                                     backend_module),
            "inputs": {name: entry["sha256"] for name, entry in job.inputs.items()}}


def make_prompts(config: dict, problems: list[str], model_dir: str) -> list[str]:
    """Prompts from the config slice's template (and the model's chat template if asked)."""
    tokenizer = None
    if config.get("chat_template"):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(model_dir)
    return build_prompts(config["prompt_template"], problems, chat_tokenizer=tokenizer,
                         chat_date=config.get("chat_date", CHAT_DATE))
