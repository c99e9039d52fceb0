"""Per-GPU memory of every training and sampling job of a config, against the GPUs it requests.

``fpa plan-memory CONFIG`` prints it; planning (the Snakefile) warns about the GPU jobs that
will not fit ``gpu_memory_gb``, before any of them waits in a queue. A training job is
estimated by ``fpa.memory.training``; a vLLM job holds the bf16 weights of its share of the
model (``tensor_parallel_size``) and fills the rest of ``gpu_memory_utilization`` with KV
cache; the reference cache job holds the model for forward passes in the dtype the training computes
its weights in (fp32, bf16 under FSDP's bf16 gathers).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from fpa.memory.architecture import Architecture
from fpa.memory.training import (FP32, TrainingJob, compute_weights_dtype, fsdp_param_dtype, objective_chunk_rows,
                                 objective_head_buffers, training_memory)
from fpa.online.base import COLOCATED_VLLM_SHARE
from fpa.paths import HUB_MODEL, TOY_MODEL
from fpa.precision import element_bytes
from fpa.resources import job_world

GIB = 2**30
# device memory outside PyTorch's allocator: the CUDA context and kernels (~0.5 GiB on an H100
# with torch 2.x), plus what the caching allocator holds beyond the live tensors
CUDA_OVERHEAD = GIB
VLLM_MEMORY_UTILIZATION = 0.9  # fpa.generation.vllm's default
GPU_COUNTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class Estimate:
    """One job's bytes per GPU: ``components`` of the configured setting and the verdict."""

    rule: str
    model: str
    run: str
    gpus: int
    parallel: str
    per_gpu: int
    fits: bool
    components: dict
    suggestion: str = ""


def model_architecture(name: str, entry: Mapping, root: Path) -> Architecture | None:
    """A model's shapes: its fetched (or built) ``config.json``, else the config's ``architecture``."""
    fetched = root / (HUB_MODEL if entry["source"] == "hub" else TOY_MODEL).format(model=name)
    if (fetched / "config.json").is_file():
        return Architecture.from_model_dir(fetched)
    if "architecture" in entry:
        return Architecture.from_hf(entry["architecture"], f"models.{name}.architecture")
    return None


def sequences_per_problem(config: Mapping) -> int:
    return 2 if config["dataset"]["source"] == "step_dpo" else config["dataset"]["k"]


def training_job(config: Mapping, run, arch: Architecture, world: int, **overrides) -> TrainingJob:
    """What one of the ``world`` ranks of ``run``'s training job does (``overrides``: another parallel setting)."""
    from fpa.objectives import get_objective

    training = run.training
    objective = get_objective(run.objective)
    per_token = bool({"hat", "fwd_kl"} & set(objective.requires))
    per_problem = sequences_per_problem(config)
    job = TrainingJob(
        sequences=training["micro_batch_problems"] * per_problem,
        max_length=training["max_length"],
        precision=training["precision"],
        gradient_checkpointing=training["gradient_checkpointing"],
        checkpoint_every_layers=training["checkpoint_every_layers"],
        chunk_size=objective_chunk_rows(training["chunk_size"], training["head_memory_mb"], arch.vocab_size,
                                        objective, training["reference"]),
        world=world,
        parallel=training.get("parallel", "ddp"),
        cpu_offload=training.get("fsdp_cpu_offload", False),
        reshard_after_forward=training.get("fsdp_reshard_after_forward", True),
        gathered_element=element_bytes(fsdp_param_dtype(training)),
        reference_head=per_token and training["reference"] == "cached",
        head_buffers=objective_head_buffers(objective, training["reference"]),
    )
    return dataclasses.replace(job, **overrides)


def _training_bytes(arch: Architecture, job: TrainingJob, online_reference: bool) -> dict:
    parts = training_memory(arch, job)
    if online_reference:  # the frozen reference model beside the policy, fp32
        parts["reference_model"] = FP32 * arch.params
        parts["peak"] += parts["reference_model"]
    parts["peak"] += CUDA_OVERHEAD
    return parts


def suggest(arch: Architecture, job: TrainingJob, online_reference: bool, budget: int, per_problem: int) -> str:
    """The first change, least disruptive first, under which ``job`` fits ``budget`` bytes per GPU
    (``per_problem``: the sequences of one problem, the smallest micro-batch)."""
    fsdp = dict(parallel="fsdp", gradient_checkpointing=True)
    candidates = [("parallel: fsdp", dict(parallel="fsdp")),
                  ("parallel: fsdp, gradient_checkpointing: true", fsdp)]
    if job.sequences > per_problem:
        candidates.append(("parallel: fsdp, gradient_checkpointing: true, micro_batch_problems: 1",
                           dict(fsdp, sequences=per_problem)))
    candidates += [(f"parallel: fsdp, gradient_checkpointing: true, gpu: {n}", dict(fsdp, world=n))
                   for n in GPU_COUNTS if n > job.world]
    candidates.append(("parallel: fsdp, fsdp_cpu_offload: true, gradient_checkpointing: true",
                       dict(fsdp, cpu_offload=True)))
    for label, change in candidates:
        if _training_bytes(arch, dataclasses.replace(job, **change), online_reference)["peak"] <= budget:
            return label
    return "no setting tried fits: more GPUs than 8 or a shorter max_length"


def plan_memory(config: Mapping, runs: Mapping, gpu_bytes: int, root: Path = Path(".")) -> list[Estimate]:
    """Every training, reference-cache and vLLM sampling job with GPUs (and every training job
    on CPUs, for its host memory), per model whose architecture is known."""
    estimates = []
    train = config["resources"]["train"]
    train_gpus = train["gpu"] * train["nodes"]  # the job's GPUs over all its nodes
    for (model, name), run in runs.items():
        arch = model_architecture(model, config["models"][model], root)
        if arch is not None and run.online:
            estimates.append(_online_job(config, model, name, run, arch, gpu_bytes))
        if arch is None or run.online:
            continue
        job = training_job(config, run, arch, job_world(train))
        online = run.training["reference"] == "online"
        parts = _training_bytes(arch, job, online)
        fits = parts["peak"] <= gpu_bytes
        estimates.append(Estimate("train", model, name, train_gpus, job.parallel, parts["peak"], fits, parts,
                                  "" if fits else suggest(arch, job, online, gpu_bytes, sequences_per_problem(config))))
    for model, entry in config["models"].items():
        arch = model_architecture(model, entry, root)
        if arch is not None:
            estimates += _inference_jobs(config, model, arch, gpu_bytes)
    return estimates


def _online_job(config: Mapping, model: str, name: str, run, arch: Architecture, gpu_bytes: int) -> Estimate:
    """An online run: its policy trained as an offline run's (``micro_batch`` completions a forward,
    each at most ``max_length`` tokens, no reference), beside TRL's colocated vLLM engine, which
    takes ``COLOCATED_VLLM_SHARE`` of each GPU when the backend is vLLM."""
    from fpa.online import get_online_method

    train = config["resources"]["train"]
    hyper = get_online_method(run.objective).parse_params(run.params, "params")
    training = run.training
    job = TrainingJob(sequences=hyper.micro_batch, max_length=training["max_length"], precision=training["precision"],
                      gradient_checkpointing=training["gradient_checkpointing"],
                      chunk_size=hyper.micro_batch * training["max_length"],  # TRL: the logits of a whole forward
                      world=job_world(train), parallel=training.get("parallel", "ddp"),
                      cpu_offload=training.get("fsdp_cpu_offload", False),
                      gathered_element=element_bytes(fsdp_param_dtype(training)),
                      reference_head=False, head_buffers=1)
    parts = _training_bytes(arch, job, online_reference=False)
    share = int(COLOCATED_VLLM_SHARE * gpu_bytes) if config["generation"]["backend"] == "vllm" else 0
    parts["colocated_vllm"] = share
    parts["peak"] += share
    fits = parts["peak"] <= gpu_bytes
    return Estimate("train_online", model, name, job.world, job.parallel, parts["peak"], fits, parts,
                    "" if fits else suggest(arch, job, False, gpu_bytes - share, 1))


def _inference_jobs(config: Mapping, model: str, arch: Architecture, gpu_bytes: int) -> list[Estimate]:
    out = []
    cache = config["resources"]["cache_reference"]["gpu"]
    if cache:
        element = element_bytes(compute_weights_dtype(config["training"]))
        parts = {"weights": element * arch.params, "peak": element * arch.params + CUDA_OVERHEAD}
        out.append(Estimate("cache_reference", model, "", cache, "-", parts["peak"], parts["peak"] <= gpu_bytes,
                            parts, "" if parts["peak"] <= gpu_bytes else "a GPU with more memory"))
    if config["generation"]["backend"] == "vllm":
        tp = config["generation"]["tensor_parallel_size"]
        weights = 2 * arch.params // tp
        usable = int(VLLM_MEMORY_UTILIZATION * gpu_bytes)
        parts = {"weights": weights, "kv_cache": max(0, usable - weights - CUDA_OVERHEAD), "peak": usable}
        fits = weights + CUDA_OVERHEAD < usable
        for rule in ("sample_offline", "evaluate"):
            if config["resources"][rule]["gpu"]:
                out.append(Estimate(rule, model, "", tp, f"tp {tp}", usable, fits, parts,
                                    "" if fits else f"generation.tensor_parallel_size: {2 * tp}"))
    return out


def _grouped(estimates: list[Estimate], both: Mapping | None = None) -> list[tuple[Estimate, str]]:
    """Estimates that differ only in their run, as one with the runs named (the first three and a count)."""
    groups: dict = {}
    for e in estimates:
        variants = tuple(sorted(both[(e.model, e.run)].items())) if both and (e.model, e.run) in both else ()
        key = (e.rule, e.model, e.gpus, e.parallel, e.per_gpu, e.fits, e.suggestion, variants)
        groups.setdefault(key, (e, []))[1].append(e.run)
    out = []
    for e, runs in groups.values():
        named = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
        out.append((e, named))
    return out


def format_plan(estimates: list[Estimate], gpu_bytes: int, both: Mapping[str, Mapping] | None = None) -> str:
    """A Markdown table, GiB per GPU; ``both``: training estimates under ddp and fsdp by (model, run)."""
    header = f"| job | model | runs | GPUs | setting | GiB per GPU | fits {gpu_bytes / GIB:.0f} GiB |"
    lines = [header, "|---|---|---|---:|---|---:|---|"]
    for e, runs in _grouped(estimates, both):
        verdict = "yes" if e.fits else f"**no**: {e.suggestion}"
        cell = f"{e.per_gpu / GIB:.1f}"
        if both and (e.model, e.run) in both:
            ddp, fsdp = both[(e.model, e.run)]["ddp"], both[(e.model, e.run)]["fsdp"]
            cell = f"{cell} (ddp {ddp / GIB:.1f}, fsdp {fsdp / GIB:.1f})"
        lines.append(f"| {e.rule} | {e.model} | {runs} | {e.gpus} | {e.parallel} | {cell} | {verdict} |")
    return "\n".join(lines)


def parallel_variants(config: Mapping, runs: Mapping, root: Path = Path(".")) -> dict:
    """Each training run's bytes per GPU under ddp and under fsdp, on the configured GPUs (all nodes')."""
    out = {}
    world = job_world(config["resources"]["train"])
    for (model, name), run in runs.items():
        arch = model_architecture(model, config["models"][model], root)
        if arch is None or run.online:
            continue
        online = run.training["reference"] == "online"
        out[(model, name)] = {
            parallel: _training_bytes(arch, training_job(config, run, arch, world, parallel=parallel), online)["peak"]
            for parallel in ("ddp", "fsdp")
        }
    return out


def memory_warnings(config: Mapping, runs: Mapping, root: Path) -> list[str]:
    """One line per group of GPU jobs that will not fit ``gpu_memory_gb``, with what would."""
    gpu_bytes = int(config["gpu_memory_gb"] * GIB)
    over = [e for e in plan_memory(config, runs, gpu_bytes, root) if e.gpus and not e.fits]
    return [f"memory: {e.rule} {e.model} {named}".rstrip() + f": ~{e.per_gpu / GIB:.0f} GiB per GPU on {e.gpus} "
            f"GPU(s) ({e.parallel}) > gpu_memory_gb {config['gpu_memory_gb']}; fits with {e.suggestion} "
            f"(fpa plan-memory)" for e, named in _grouped(over)]


def to_json(estimates: list[Estimate]) -> str:
    return json.dumps([dataclasses.asdict(e) for e in estimates], indent=1)
