"""The cost of a config before it runs: the disk each job family writes and its GPU-hours.

Disk, from the shapes and the config: a training run writes its snapshots and final checkpoint
in HF format in the training's dtype (``fpa.training.checkpoints.saved_dtype``) and, while it
runs, one resumable checkpoint (fp32 weights and AdamW's two moments, 12 B a parameter, sharded
or not); the reference cache z_ref in its storage dtype (``fpa.reference.cache``) plus fp32
log-normalisers and int32 targets per token and the fp32 head; sampling its completions as text.

GPU-hours, from FLOPs at an assumed utilisation of the GPU's peak (``Assumptions``, printed
with the plan and overridable): training's model FLOPs, 6 a parameter a token, over the GPU's rate on the
FLOPs it executes (``train_hfu``, from the GPU record's measured MFU where it has one) times the share of
them the model needs, counted per layout and checkpointing (``fpa.memory.useful_share``: padding and
recomputation executed, not useful); the cache's and evaluation's prompt forward 2. Generation
(sampling, evaluation, model selection and every snapshot of each planned curve) as its backend
runs it, engine start-ups included (``fpa.memory.generation_cost``). Token counts are the mean
tokens a sequence (an assumed fraction of ``max_length`` / ``max_new_tokens``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Mapping, Sequence

from fpa.memory.architecture import Architecture
from fpa.memory.generation_cost import GPU_RECORD, DecodeRate, engines_per_job, generation_hours, hf_decode_rate
from fpa.memory.plan import model_architecture, sequences_per_problem
from fpa.memory.training import reference_cache_dtype
from fpa.memory.useful_share import FLOPS_RECORD, useful_share
from fpa.paths import CURVE, parse
from fpa.precision import element_bytes
from fpa.resources import job_device

GB = 1e9
#: training problems of a dataset source before the validation split, where the config does not state
#: them: MATH train (7,500) + MATH test (5,000) − MATH500 (500); Math-Step-DPO-10K's 10,795 pairs
DATASET_PROBLEMS = {"math12k": 12_000, "step_dpo": 10_795}
TEXT_BYTES_PER_TOKEN = 4  # a token of English or LaTeX is ~4 characters of UTF-8 JSON



def measured_train_hfu(record: Path = GPU_RECORD, flops: Path = FLOPS_RECORD) -> tuple[float, str] | None:
    """The GPU's rate on executed FLOPs in config/paper.yaml's training as measured on a GPU (a full run's
    ``users_step``: its Off-RL MFU over the useful share of the layout it ran) and where it comes from;
    None where ``record`` holds none."""
    if not Path(record).is_file():
        return None
    data = json.loads(Path(record).read_text())
    entry = data.get("measurements", {}).get("users_step", {})
    if data.get("mode") != "full" or entry.get("status") != "ok" or "planner_train_mfu" not in entry["result"]:
        return None
    mfu = entry["result"]["planner_train_mfu"]
    where = f"measured: {Path(record).name}, users_step on {data['gpu']} at {entry.get('commit', data['commit'])}"
    training = entry["result"].get("variants", {}).get("configured", {}).get("training")
    if training is None:
        return mfu, f"{where}: its MFU (the record names no layout to divide by its useful share)"
    share, source = useful_share(training, flops)
    return mfu / share, f"{where}: MFU {mfu:.3f} / useful share {share:.3f} ({source})"


#: what each assumption may be, as (the test a value passes, what the message says was expected):
#: shares of a peak or of a length, a rate or a count, a time; none makes a cost negative or NaN
_SHARE = (lambda value: 0 < value <= 1, "a number in (0, 1]")
_POSITIVE = (lambda value: 0 < value < math.inf, "a finite number > 0")
ASSUMPTION_BOUNDS = {"peak_tflops": _POSITIVE, "train_hfu": _SHARE, "forward_mfu": _SHARE, "generation_mfu": _SHARE,
                     "sequence_fill": _SHARE, "completion_fill": _SHARE, "train_problems": _POSITIVE,
                     "engine_start_s": (lambda value: 0 <= value < math.inf, "a finite number >= 0")}


@dataclass(frozen=True)
class Assumptions:
    """What the GPU-hours rest on; each a ``fpa plan-memory`` option."""

    peak_tflops: float = 989.0  # H100 SXM, bf16 dense
    train_hfu: float = 0.35  # executed FLOPs (padding and recomputation included) / (seconds x peak)
    forward_mfu: float = 0.45  # the cache's forward passes
    generation_mfu: float = 0.06  # vLLM decoding, memory-bound
    sequence_fill: float = 0.5  # mean tokens of a training sequence / max_length
    completion_fill: float = 0.5  # mean generated tokens / generation.max_new_tokens
    train_problems: int | None = None  # default: dataset.n_problems, else DATASET_PROBLEMS
    engine_start_s: float = 60.0  # a vLLM engine's start (load, profile, CUDA graphs): a minute or more
    train_hfu_source: str = "assumed: no GPU record with a measured training MFU"

    def __post_init__(self):
        """Each assumption within ``ASSUMPTION_BOUNDS``: no cost comes out negative, infinite or NaN."""
        for name, (allowed, expected) in ASSUMPTION_BOUNDS.items():
            value = getattr(self, name)
            if value is not None and not allowed(value):
                raise ValueError(f"{name} (--{name.replace('_', '-')}): expected {expected}, got {value!r}")

    @classmethod
    def calibrated(cls, record: Path = GPU_RECORD, flops: Path = FLOPS_RECORD, **given) -> "Assumptions":
        """The defaults with ``train_hfu`` measured in the GPU ``record`` where it has one, then ``given``."""
        measured = None if "train_hfu" in given else measured_train_hfu(record, flops)
        if measured is not None:
            given = {"train_hfu": measured[0], "train_hfu_source": measured[1], **given}
        elif "train_hfu" in given:
            given = {"train_hfu_source": "given (--train-hfu)", **given}
        return cls(**given)

    def lines(self) -> list[str]:
        given = {field.name: getattr(self, field.name) for field in fields(self)}
        if given["train_problems"] is None:
            given["train_problems"] = "the dataset's (dataset.n_problems, else DATASET_PROBLEMS by source)"
        return [f"- {name}: {value}" for name, value in given.items()]


@dataclass(frozen=True)
class Cost:
    family: str
    model: str
    jobs: int
    disk_bytes: float
    gpu_hours: float
    note: str = ""


def dataset_problems(config: Mapping, assume: Assumptions) -> int | None:
    """Problems of the offline dataset before its validation split; None where not known."""
    dataset = config["dataset"]
    toy = dataset.get("n_problems") if dataset["source"] == "toy" else None
    return assume.train_problems or DATASET_PROBLEMS.get(dataset["source"]) or toy


def train_problems(config: Mapping, assume: Assumptions) -> int | None:
    problems = dataset_problems(config, assume)
    return None if problems is None else int(problems * (1 - config["dataset"].get("validation_fraction", 0.0)))


def _gpu_hours(tokens: float, flops_per_token: float, mfu: float, assume: Assumptions) -> float:
    return tokens * flops_per_token / (mfu * assume.peak_tflops * 1e12) / 3600


def training_cost(config: Mapping, model: str, runs: list, arch: Architecture, assume: Assumptions,
                  flops: Path = FLOPS_RECORD) -> Cost:
    """The offline training runs of ``model`` (each trained once per seed)."""
    problems, per_problem = train_problems(config, assume), sequences_per_problem(config)
    disk = hours = 0.0
    jobs = 0
    shares = {}
    for run in runs:
        t = run.training
        steps = t["epochs"] * math.ceil(problems / t["batch_problems"])
        snapshots = steps // t["snapshot_every"] if t["snapshot_every"] else 0
        saved = element_bytes(t["precision"]) * arch.params
        tokens = steps * t["batch_problems"] * per_problem * t["max_length"] * assume.sequence_fill
        share, source = useful_share(t, flops)
        shares[source] = share
        seeds = len(run.seeds)
        jobs += seeds
        disk += seeds * ((snapshots + 1) * saved + 12 * arch.params)
        hours += seeds * _gpu_hours(tokens, 6 * arch.params, assume.train_hfu * share, assume)
    useful = "; ".join(f"{100 * share:.0f} % of the FLOPs useful ({source})" for source, share in shares.items())
    return Cost("train", model, jobs, disk, hours,
                f"snapshots + final in the training dtype, + one fp32 resumable; {useful}")


def sampling_and_cache_costs(config: Mapping, model: str, arch: Architecture, assume: Assumptions,
                             rate: DecodeRate | None, cache_dtype: str) -> list[Cost]:
    """The offline dataset's sampling and the reference cache over it, z_ref in ``cache_dtype`` (one job
    each per model)."""
    sequences = dataset_problems(config, assume) * sequences_per_problem(config)
    completion = config["generation"]["max_new_tokens"] * assume.completion_fill
    out = []
    if config["dataset"]["source"] != "step_dpo":
        out.append(Cost("sample_offline", model, 1, sequences * completion * TEXT_BYTES_PER_TOKEN,
                        generation_hours(config["generation"], arch.params, sequences * completion,
                                         engines_per_job(config, "sample_offline"), assume, rate),
                        rated("completions as JSONL text", rate)))
    # the forward reads whole sequences; the cache keeps the rows that predict completion tokens
    tokens = sequences * config["training"]["max_length"] * assume.sequence_fill
    per_token = arch.hidden_size * element_bytes(cache_dtype) + 4 + 4  # z_ref, ref_lse fp32, targets int32
    out.append(Cost("cache_reference", model, 1,
                    sequences * completion * per_token + 4 * arch.vocab_size * arch.hidden_size,
                    _gpu_hours(tokens, 2 * arch.params, assume.forward_mfu, assume),
                    f"z_ref in {cache_dtype} over every completion token"))
    return out


def benchmark_problems(config: Mapping, catalog: Mapping, name: str, assume: Assumptions) -> int:
    """Problems of benchmark ``name``: its catalog parts' ``records``, the validation split's share."""
    bench = config["benchmarks"][name]
    if bench["source"] == "validation":
        return int((dataset_problems(config, assume) or 0) * config["dataset"].get("validation_fraction", 0.0))
    entries = catalog.get("benchmarks", {})
    return sum(int(entries.get(part, {}).get("records", 0)) for part in bench.get("parts", ()))


def evaluation_cost(config: Mapping, model: str, runs: list, arch: Architecture, catalog: Mapping,
                    assume: Assumptions, rate: DecodeRate | None = None) -> Cost:
    """Each run and seed sampled on the tables' benchmarks once (an ``evaluate`` job), and on the
    selection benchmark at every snapshot and the final checkpoint (a ``select_checkpoint`` job,
    ``model_selection``), each job with its own engine."""
    completion = config["generation"]["max_new_tokens"] * assume.completion_fill
    samples = {name: benchmark_problems(config, catalog, name, assume) * bench["n"]
               for name, bench in config["benchmarks"].items()}
    selection = (config.get("model_selection") or {}).get("benchmark")
    tested = sum(count for name, count in samples.items() if name != selection)
    generated = 0.0
    for run in runs:
        checkpoints = run_snapshots(config, run, assume) + 1
        per_seed = tested + (checkpoints * samples[selection] if selection else 0)
        generated += len(run.seeds) * per_seed * completion
    jobs = sum(len(run.seeds) for run in runs) * (2 if selection else 1)
    hours = generation_hours(config["generation"], arch.params, generated,
                             jobs * engines_per_job(config, "evaluate"), assume, rate)
    return Cost("evaluate", model, jobs, generated * TEXT_BYTES_PER_TOKEN, hours,
                rated("completions as JSONL text", rate))


def curve_cost(config: Mapping, model: str, runs: Mapping, curves: Sequence[str], arch: Architecture,
               catalog: Mapping, assume: Assumptions, rate: DecodeRate | None = None) -> Cost | None:
    """The planned accuracy ``curves`` (``fpa.paths.CURVE``) of ``model``: every
    snapshot of the run (the base model: one point) sampled on the curve benchmarks, in one job with one
    engine per curve; None without curves."""
    methods = [run["method"] for run in (parse(CURVE, path) for path in curves) if run["model"] == model]
    if not methods:
        return None
    samples = sum(benchmark_problems(config, catalog, name, assume) * config["benchmarks"][name]["n"]
                  for name in config.get("curve_benchmarks", ()))
    points = sum(1 if method == "base" else run_snapshots(config, runs[(model, method)], assume)
                 for method in methods)
    generated = points * samples * config["generation"]["max_new_tokens"] * assume.completion_fill
    hours = generation_hours(config["generation"], arch.params, generated,
                             len(methods) * engines_per_job(config, "evaluate"), assume, rate)
    return Cost("curve", model, len(methods), generated * TEXT_BYTES_PER_TOKEN, hours,
                rated(f"{points} snapshots on {', '.join(config['curve_benchmarks'])}, one engine per curve job", rate))


def run_snapshots(config: Mapping, run, assume: Assumptions) -> int:
    """Snapshots one seed of ``run`` keeps (its curve's points)."""
    t = run.training
    steps = t["epochs"] * math.ceil(train_problems(config, assume) / t["batch_problems"])
    return steps // t["snapshot_every"] if t["snapshot_every"] else 0


def format_costs(costs: list[Cost], assume: Assumptions, budget_gb: float | None) -> str:
    """A Markdown table per job family and model, a total row, and the assumptions."""
    lines = ["| job | model | jobs | disk GB | GPU-hours | what |", "|---|---|---:|---:|---:|---|"]
    for c in costs:
        lines.append(f"| {c.family} | {c.model} | {c.jobs} | {c.disk_bytes / GB:,.1f} | {c.gpu_hours:,.1f} | {c.note} |")
    disk, hours = sum(c.disk_bytes for c in costs), sum(c.gpu_hours for c in costs)
    lines.append(f"| **total** | | {sum(c.jobs for c in costs)} | **{disk / GB:,.0f}** | **{hours:,.0f}** | |")
    budget = "none set (budget.disk_gb)" if budget_gb is None else f"{budget_gb:,.0f} GB (budget.disk_gb)"
    return "\n".join(lines + ["", f"Disk budget: {budget}.", "", "Assumptions (GPU-hours):"] + assume.lines())


def plan_costs(config: Mapping, runs: Mapping, root: Path, assume: Assumptions = Assumptions(), *,
               catalog: Mapping, curves: Sequence[str]) -> list[Cost]:
    """Every offline job family of every model with a known architecture (online runs: not estimated);
    ``catalog``: the parsed data catalog (``fpa.config.catalog.load_catalog``); ``curves``: the planned curve
    CSVs (``fpa.planning.figures.planned_curves``, a layer above). For a config whose problem count is
    known (``train_problems``): both callers check it first."""
    architectures = {model: model_architecture(model, entry, root) for model, entry in config["models"].items()}
    rate = decode_rate(config, architectures)
    cache_dtype = reference_cache_dtype(config["training"], job_device(config, "train"))
    costs = []
    for model, arch in architectures.items():
        trained = [run for (name, _), run in runs.items()
                   if name == model and not run.online and run.trained_as == run.name]
        if arch is None or not trained:
            continue
        costs += sampling_and_cache_costs(config, model, arch, assume, rate, cache_dtype)
        costs.append(training_cost(config, model, trained, arch, assume))
        costs.append(evaluation_cost(config, model, trained, arch, catalog, assume, rate))
        costs += [cost for cost in [curve_cost(config, model, runs, curves, arch, catalog, assume, rate)] if cost]
    return costs


def rated(note: str, rate: DecodeRate | None) -> str:
    """A generation family's note, with the HF decoder's measured rate its GPU-hours rest on."""
    return note if rate is None else f"{note}; {rate.note()}"


def decode_rate(config: Mapping, architectures: Mapping[str, Architecture | None]) -> DecodeRate | None:
    """The HF decoder's measured rate where the config generates with HF, else None."""
    if config["generation"]["backend"] != "hf":
        return None
    params = {model: arch.params for model, arch in architectures.items() if arch is not None}
    return hf_decode_rate(config["generation"]["batch_size"], params)
