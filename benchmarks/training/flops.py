"""Useful FLOPs, counted: what share of a user's training step's FLOPs a model needs, FPA and Off-RL.

    python benchmarks/training/flops.py          # CPU, a minute or two; writes benchmarks/training/results/flops.json
    python benchmarks/training/flops.py --help   # --steps, --layers, --width, --attention

What runs: the trainer's own session and optimizer steps (``fpa.training.loop``) with config/paper.yaml's
``training:`` as users run it (FSDP2 at world 1, bf16, gradient checkpointing, the head's automatic chunk,
one problem of K = 8 samples per micro-batch, 8 problems a step), on MATH's length mix
(``gpu.throughput.math_samples``, from ``gpu/math_lengths.json``), for FPA (with its reference cache)
and Off-RL, under each ``training.attention`` asked, once with the paper's gradient checkpointing and
once without; and the reference cache's forward over the same samples (``write_reference_cache``).

Shapes: Qwen3-4B-Base's (config/paper.yaml's ``architecture``) with every width (hidden size, MLP,
query and K/V heads; head_dim 128 kept) and every sequence length times ``--width`` f, its 36 layers cut
to ``--layers`` l, its vocabulary times (l / 36)·f. Per token, the linear layers' FLOPs scale as l·f², the
attention's as l·(f·H·hd)·(f·s), the head's as (V·l·f/36)·(f·d): all alike, so each share below is the full
model's on MATH's lengths (up to whole tokens), while a CPU runs it in a minute or two.

Executed: torch's ``FlopCounterMode`` over the whole step (forward, backward, checkpointing's
recomputation, the loss head, FPA's reference head; the optimizer adds no matmul). The CPU's SDPA kernels
are missing from its table, so they are counted here with torch's own SDPA formula, grouped K/V as the
query heads use them, as it counts CUDA's: the full product (a causal kernel's upper triangle included)
and, in backward, the scores a flash kernel recomputes.

Useful: MFU's model FLOPs (``gpu.throughput.model_flops``): 6·N_body·T over the real tokens, 6·V·d·C for
the head over the completion tokens, 6·L·H·hd·Σ s_i² for causal attention; the cache's forward a third
of it. Recomputation is not useful (MFU does not count it), so the useful share is useful / executed
without checkpointing, and the recomputation's share of the executed FLOPs with it is reported beside.
The rest is padding (its tokens in every layer, and attention over padded rows), attention beyond its
causal half (the counted upper triangle, flash's recomputed scores), the head's recomputation of its
logits in backward (``fpa.training.head``) and, for FPA, the reference head.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import torch
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from gpu.models import paper_config, shape as paper_shape, write_model_dir  # noqa: E402
from gpu.throughput import math_samples, model_flops, step_shapes  # noqa: E402
from gpu.training import method_params  # noqa: E402
from shared.checkouts import commit_of  # noqa: E402

from fpa.io import write_json, write_jsonl  # noqa: E402
from fpa.provenance.cpu import cpu_facts  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "results" / "flops.json"
MODEL = "qwen3-4b-base"
METHODS = ("fpa", "offrl")


def _as_query_heads(query_shape, other_shape) -> tuple:
    """Key or value shape [B, H_kv, S, D] as the H query heads use it (grouped K/V)."""
    return (*query_shape[:2], *other_shape[2:])


def _cpu_sdpa(query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(query_shape, _as_query_heads(query_shape, key_shape),
                           _as_query_heads(query_shape, value_shape))


def _cpu_sdpa_backward(grad_out_shape, query_shape, key_shape, value_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out_shape, query_shape, _as_query_heads(query_shape, key_shape),
                                    _as_query_heads(query_shape, value_shape))


CPU_ATTENTION = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_sdpa,
                 torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward: _cpu_sdpa_backward}


def scaled_shape(width: int, layers: int):
    """Qwen3-4B-Base's shape with widths and lengths divided by ``width``, ``layers`` deep, the vocabulary
    scaled as the widths times the depth (see the module's docstring)."""
    full = paper_shape(MODEL, tiny=False)
    arch = full.architecture
    for name in ("hidden_size", "intermediate_size", "num_attention_heads", "num_key_value_heads"):
        if getattr(arch, name) % width:
            raise ValueError(f"--width {width}: {MODEL}'s {name} {getattr(arch, name)} is not a multiple of it")
    vocab = round(arch.vocab_size * layers / arch.num_hidden_layers / width)
    scaled = dataclasses.replace(arch, hidden_size=arch.hidden_size // width,
                                 intermediate_size=arch.intermediate_size // width,
                                 num_attention_heads=arch.num_attention_heads // width,
                                 num_key_value_heads=arch.num_key_value_heads // width,
                                 num_hidden_layers=layers, vocab_size=vocab)
    return dataclasses.replace(full, name=f"{MODEL} (widths and lengths / {width}, {layers} layers)",
                               architecture=scaled, max_length=full.max_length // width,
                               prompt=full.prompt // width)


def counted(work) -> tuple[object, dict]:
    """``work()``'s return value and its executed FLOPs: total, attention's, and per operator."""
    with FlopCounterMode(display=False, custom_mapping=CPU_ATTENTION) as counter:
        value = work()
    by_op = {str(op): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items()}
    return value, {"total": int(counter.get_total_flops()),
                   "attention_flops": sum(n for op, n in by_op.items() if "attention" in op), "by_op": by_op}


def count_steps(files: dict, method: str, training: dict, steps: int) -> dict:
    """The executed FLOPs of the first ``steps`` optimizer steps of ``method`` trained as ``training``."""
    from fpa.training import loop
    from fpa.training.session import TrainConfig, open_session

    run, _ = open_session(files["model"], files["train"], files["val"], files["cache"], method,
                          method_params(MODEL, method),
                          TrainConfig.from_dict(training), seed=42)
    run.body.train()
    started = time.process_time()
    _, flops = counted(lambda: [loop._optimizer_step(run, step) for step in range(steps)])
    return {**flops, "cpu_s": time.process_time() - started, "steps": step_shapes(run, steps)}


def count_cache(shape, files: dict, samples: list[dict], attention: str, directory: Path) -> dict:
    """The executed FLOPs of the reference cache's forward over ``samples``, laid out as ``attention`` lays out."""
    from fpa.reference.cache import write_reference_cache
    from fpa.toy.tokenizer import build_tokenizer

    training = paper_config()["training"]
    packed = {"packed": True} if attention == "packed" else {}
    _, flops = counted(lambda: write_reference_cache(files["model"], samples, build_tokenizer(), directory,
                                                     max_length=shape.max_length, precision=training["precision"],
                                                     **packed))
    return flops


def measure(args) -> dict:
    shape = scaled_shape(args.width, args.layers)
    training = {**paper_config()["training"], "max_length": shape.max_length}
    samples = math_samples(shape, training["batch_problems"] * args.steps, 1 / args.width)
    record = {"benchmark": "flops", "commit": commit_of(ROOT), "torch": torch.__version__, "cpu": cpu_facts(),
              "shape": shape.name, "architecture": dataclasses.asdict(shape.architecture), "width": args.width,
              "layers": args.layers, "steps": args.steps, "training": training, "cases": [], "cache": {}}
    with TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_jsonl(work / "train.jsonl", samples)
        write_jsonl(work / "val.jsonl", samples[: shape.sequences])
        files = {"model": str(write_model_dir(shape, work / "model", "cpu")), "train": str(work / "train.jsonl"),
                 "val": str(work / "val.jsonl"), "cache": str(work / f"cache-{args.attention[0]}")}
        for attention in args.attention:
            record["cache"][attention] = count_cache(shape, files, samples, attention, work / f"cache-{attention}")
        for method in METHODS:
            for attention in args.attention:
                for checkpointing in (True, False):
                    counts = count_steps(files, method, {**training, "attention": attention,
                                                         "gradient_checkpointing": checkpointing}, args.steps)
                    record["cases"].append({"method": method, "attention": attention,
                                            "gradient_checkpointing": checkpointing, **counts})
                    print(f"{method} {attention} checkpointing {checkpointing}: {counts['total'] / 1e9:,.1f} GFLOP "
                          f"in {counts['cpu_s']:.0f} CPU s", flush=True)
    record["useful"] = useful(shape, record["cases"][0]["steps"])
    return record


def useful(shape, steps: list[dict]) -> dict:
    """The steps' model FLOPs (MFU's), their real and padded tokens, and the cache forward's model FLOPs."""
    step = sum(model_flops(shape, s["lengths"], s["completion"]) for s in steps)
    return {"step": step, "cache_forward": step / 3, "tokens": sum(sum(s["lengths"]) for s in steps),
            "padded_tokens": sum(s["padded"] for s in steps)}


def shares(record: dict) -> list[dict]:
    """Per method and layout: executed FLOPs without and with checkpointing, the useful share of the first,
    the recomputation's share of the second, and attention's share of the first."""
    cases = {(c["method"], c["attention"], c["gradient_checkpointing"]): c for c in record["cases"]}
    rows = []
    for method, attention, checkpointing in cases:
        if not checkpointing:
            continue
        with_, without = cases[method, attention, True]["total"], cases[method, attention, False]["total"]
        rows.append({"method": method, "attention": attention, "executed": without, "with_checkpointing": with_,
                     "useful_share": record["useful"]["step"] / without,
                     "recomputation_share": (with_ - without) / with_,
                     "attention_share": cases[method, attention, False]["attention_flops"] / without})
    return rows


LABELS = {"fpa": "FPA", "offrl": "Off-RL"}


def markdown(record: dict) -> str:
    useful_ = record["useful"]
    arch = record["architecture"]
    lines = [f"{record['shape']}: d = {arch['hidden_size']}, {arch['num_attention_heads']} query / "
             f"{arch['num_key_value_heads']} K/V heads of {arch['head_dim']}, MLP {arch['intermediate_size']}, "
             f"V = {arch['vocab_size']:,}; config/paper.yaml's training (FSDP2 at world 1, "
             f"{record['training']['precision']}, micro-batches of {record['training']['micro_batch_problems']} "
             f"problem), {record['steps']} optimizer step(s) of {record['training']['batch_problems']} problems on "
             f"MATH's length mix: {useful_['tokens']:,} real tokens, {useful_['padded_tokens']:,} padded "
             f"({100 * (1 - useful_['tokens'] / useful_['padded_tokens']):.0f} % padding); commit "
             f"`{record['commit'][:7]}`, torch {record['torch']}, CPU.", "",
             "| method | training.attention | executed GFLOP | useful GFLOP | useful share | attention's share "
             "| + checkpointing: GFLOP | recomputation's share |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for row in shares(record):
        lines.append(f"| {LABELS[row['method']]} | {row['attention']} | {row['executed'] / 1e9:,.1f} | "
                     f"{useful_['step'] / 1e9:,.1f} | {100 * row['useful_share']:.1f} % | "
                     f"{100 * row['attention_share']:.1f} % | {row['with_checkpointing'] / 1e9:,.1f} | "
                     f"{100 * row['recomputation_share']:.1f} % |")
    lines += ["", "The reference cache's forward over the same samples: " + "; ".join(
        f"{attention} {cache['total'] / 1e9:,.1f} GFLOP executed, {100 * useful_['cache_forward'] / cache['total']:.1f} "
        "% useful" for attention, cache in record["cache"].items()) + "."]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: each method's useful share, per layout counted."""
    by_method = {}
    for row in shares(record):
        by_method.setdefault(LABELS[row["method"]], []).append(f"{100 * row['useful_share']:.1f} % {row['attention']}")
    return ("useful FLOPs of a config/paper.yaml step: "
            + "; ".join(f"{method} {', '.join(layouts)}" for method, layouts in by_method.items()))


def main(argv=None) -> int:
    from fpa.training.body import ATTENTION

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1, help="optimizer steps counted (default 1)")
    parser.add_argument("--layers", type=int, default=3, help="decoder layers (default 3 of the 36)")
    parser.add_argument("--width", type=int, default=8, help="widths and lengths divided by this (default 8)")
    parser.add_argument("--attention", nargs="+", default=["masked", "packed"], choices=ATTENTION,
                        help="training.attention values to count (default masked packed: padded, then packed)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    record = measure(args)
    write_json(args.out, record)
    print(markdown(record), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
