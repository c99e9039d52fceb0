"""Peak memory per rank of one training step under FSDP2 vs DDP, 2 gloo ranks on CPU.

    nice python benchmarks/memory/fsdp_memory.py                  # 5 rounds; writes benchmarks/memory/results/fsdp_memory.json
    python benchmarks/memory/fsdp_memory.py --layers 2 --vocab 4096 --seq 64 --rounds 1 --out /tmp/m.json   # smoke run

The engine benchmark's model (``harness.build_model``: tied-head Qwen2, V = 151,936, d = 256,
32 layers, MLP 4096, fp32), wrapped by the trainer's own code (``fpa.training.parallel``: the
Policy whose forward runs the chunked loss head, DDP through accelerate or FSDP2 per layer then
root), AdamW. Each rank steps on its own ``--batch`` sequences; the loss is the mean token
log-likelihood through ``token_statistics`` (Off-RL's path).

A round launches DDP and FSDP (order alternating between rounds), each as a fresh torchrun of 2
ranks that take ``--steps`` steps; before each step the rank's RSS high-water mark is reset and
after it ``VmHWM`` is read (``harness.peak_memory``): the whole process, weights, gradients, AdamW
state, DDP's gradient buckets, activations and the interpreter. The last step (AdamW state
allocated) is the one compared: per round and rank, FSDP peak / DDP peak, paired.

After setup each rank hands freed heap memory back to the kernel (``malloc_trim``): both build
the full model before wrapping it, and glibc would otherwise keep the pages of the full copy that
FSDP frees when it shards. A GPU run never has that copy on the GPU; on CPU it would count as the
rank's footprint although nothing uses it.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.harness import add_model_args, build_model, peak_memory  # noqa: E402
from training.engine import build_batch  # noqa: E402

from fpa.io import write_json  # noqa: E402

PARALLEL = ("ddp", "fsdp")
RESULTS = Path(__file__).parent / "results" / "fsdp_memory.json"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add_model_args(parser)
    parser.set_defaults(seq=256, threads=1)
    add("--batch", type=int, default=1, help="sequences per rank per step")
    add("--rounds", type=int, default=5, help="paired DDP / FSDP launches")
    add("--steps", type=int, default=2, help="steps per launch; the last one is compared")
    add("--out", default=str(RESULTS))
    add("--worker", choices=PARALLEL, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def worker(args) -> None:
    """One rank: wrap the model as ``fpa train`` does, take ``--steps`` steps, rank 0 prints every rank's peaks."""
    from accelerate import Accelerator, DistributedDataParallelKwargs

    from fpa.training.head import token_statistics
    from fpa.training.loop import TrainConfig
    from fpa.training.parallel import Policy, make_parallel

    torch.set_num_threads(args.threads)
    accelerator = Accelerator(cpu=True, kwargs_handlers=[DistributedDataParallelKwargs(broadcast_buffers=False)])
    parallel = make_parallel(TrainConfig(parallel=args.worker), accelerator)
    body, optimizer = parallel.prepare(Policy(build_model(args), None),
                                       lambda weights: torch.optim.AdamW(weights, lr=1e-6))
    batch = build_batch(args)
    ctypes.CDLL("libc.so.6").malloc_trim(0)

    def statistics_of(hidden, head_weight):
        return token_statistics(hidden[batch["predict_mask"]], head_weight, batch["targets"],
                                chunk_size=args.chunk_size).logp

    def step():
        logp = body(batch["input_ids"], batch["attention_mask"], statistics_of)
        (-logp.mean()).backward()
        parallel.clip_grad_norm(body, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    peaks = [peak_memory(step)[0] for _ in range(args.steps)]
    ranks = [None] * accelerator.num_processes
    torch.distributed.all_gather_object(ranks, peaks)
    if accelerator.is_main_process:
        print(json.dumps(ranks))


def launch(args, parallel: str) -> list[list[dict]]:
    """A fresh torchrun of 2 ranks under ``parallel``: [rank][step] memory dicts (MB)."""
    flags = [f"--{key.replace('_', '-')}={value}" for key, value in vars(args).items()
             if key in {"vocab", "hidden", "layers", "ffn", "threads", "seq", "prompt", "chunk_size", "batch", "steps"}]
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2", __file__,
               f"--worker={parallel}", *flags]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "OMP_WAIT_POLICY": "PASSIVE"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"{parallel} launch failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def paired(rounds: list[dict], key: str = "peak_mb") -> dict:
    """Per round and rank, FSDP / DDP of the last step's ``key``; median and range."""
    ratios = [fsdp[-1][key] / ddp[-1][key] for r in rounds for ddp, fsdp in zip(r["ddp"], r["fsdp"])]
    return {"ratios": ratios, "median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


def markdown(results: dict) -> str:
    """The README's markdown table: a row per round and rank, then the median and range of the ratios."""
    lines = ["| round | rank | DDP peak MB | FSDP peak MB | FSDP / DDP | DDP before step MB | FSDP before step MB |",
             "|---|---|---|---|---|---|---|"]
    for index, r in enumerate(results["rounds"]):
        for rank, (ddp, fsdp) in enumerate(zip(r["ddp"], r["fsdp"])):
            lines.append(f"| {index + 1} | {rank} | {ddp[-1]['peak_mb']:.0f} | {fsdp[-1]['peak_mb']:.0f} | "
                         f"{fsdp[-1]['peak_mb'] / ddp[-1]['peak_mb']:.3f} | {ddp[-1]['baseline_mb']:.0f} | "
                         f"{fsdp[-1]['baseline_mb']:.0f} |")
    for label, ratio in (("peak", results["ratio"]), ("before the step", paired(results["rounds"], "baseline_mb"))):
        lines.append(f"\nFSDP / DDP {label} per rank: median {ratio['median']:.3f}, range {ratio['min']:.3f}–"
                     f"{ratio['max']:.3f} over {len(ratio['ratios'])} (round, rank) pairs.")
    return "\n".join(lines)


def markdown_headline(results: dict) -> str:
    """The index's line: FSDP2 / DDP peak per rank, paired."""
    ratio = results["ratio"]
    return (f"FSDP2 / DDP peak memory per rank: {ratio['median']:.2f} [{ratio['min']:.2f}–{ratio['max']:.2f}] "
            f"over {len(ratio['ratios'])} (round, rank) pairs")


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker(args)
        return
    model = build_model(args)
    params = sum(p.numel() for p in model.parameters())
    del model
    print(f"model: {params / 1e6:.1f}M params; V={args.vocab} d={args.hidden} layers={args.layers} ffn={args.ffn}; "
          f"{args.batch}x{args.seq} tokens per rank per step; 2 gloo ranks, {args.threads} thread(s) each", flush=True)
    load, rounds = [os.getloadavg()[0]], []
    for index in range(args.rounds):
        order = PARALLEL if index % 2 == 0 else PARALLEL[::-1]
        rounds.append({parallel: launch(args, parallel) for parallel in order})
        print(f"round {index + 1}: " + ", ".join(f"{p} {[rank[-1]['peak_mb'] for rank in rounds[-1][p]]} MB"
                                               for p in PARALLEL), flush=True)
    load.append(os.getloadavg()[0])
    run_args = {k: v for k, v in vars(args).items() if k not in ("worker", "out", "table", "reps")}
    results = {"args": run_args, "params": params, "rounds": rounds, "ratio": paired(rounds), "load_average": load,
               "device": "CPU only (2 gloo ranks on 2 cores shared with other jobs, run under nice)",
               "torch": torch.__version__}
    write_json(args.out, results)
    print(markdown(results))


if __name__ == "__main__":
    main()
