"""The loss head's chunk passes fused (``token_statistics(fused=True)``, torch.compile) against the eager ones.

    python benchmarks/training/head_fused.py                  # CPU; writes benchmarks/training/results/head_fused_cpu.json
    python benchmarks/training/head_fused.py --device cuda --hidden 2560 --vocab 151936 --precision bf16

FPA's call as the trainer makes it (fp32 policy states and head, the bf16 cache with its logsumexp,
λ = 2), forward and backward of Σ log π_θ, and Off-RL's (no reference); each fused and eager, in
paired rounds (order rotated per round, one warm-up call each, compiling the fused ones). Reports
per-round seconds, the fused / eager ratio per round (median and range) and, on CUDA, peak memory.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sys

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from gpu.clock import paired_rounds, ratio_spread, spread  # noqa: E402

from fpa.io import write_json  # noqa: E402
from fpa.provenance.cpu import cpu_facts  # noqa: E402
from fpa.training.head import token_statistics  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def head_steps(n: int, d: int, v: int, chunk: int, precision: str, device: str) -> dict:
    """{method_fused|eager: one forward + backward of the head}, on seeded inputs."""
    g = torch.Generator(device=device).manual_seed(0)
    hidden = torch.randn(n, d, generator=g, device=device).requires_grad_()
    weight = (torch.randn(v, d, generator=g, device=device) * 3 / d**0.5).requires_grad_()
    targets = torch.randint(0, v, (n,), generator=g, device=device)
    ref_hidden = (hidden.detach() + 0.1 * torch.randn(n, d, generator=g, device=device)).to(torch.bfloat16)
    ref_weight = weight.detach().clone()
    ref_lse = torch.cat([(ref_hidden[i:i + chunk].float() @ ref_weight.T).logsumexp(-1) for i in range(0, n, chunk)])
    calls = {"fpa": {"ref_hidden": ref_hidden, "ref_weight": ref_weight, "ref_logsumexp": ref_lse, "lam": 2.0},
             "offrl": {}}

    def step(extra, fused):
        def run():
            stats = token_statistics(hidden, weight, targets, chunk_size=chunk, head_precision=precision,
                                     fused=fused, **extra)
            stats.logp.sum().backward()
            hidden.grad = weight.grad = None
        return run

    return {f"{method}_{kind}": step(extra, kind == "fused") for method, extra in calls.items()
            for kind in ("fused", "eager")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--tokens", type=int, default=1024)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--chunk", type=int, default=256)
    parser.add_argument("--precision", default="fp32")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    steps = head_steps(args.tokens, args.hidden, args.vocab, args.chunk, args.precision, args.device)
    rounds = paired_rounds(steps, args.rounds, args.device)["rounds"]
    record = {"benchmark": "head_fused", "args": {k: v for k, v in vars(args).items() if k != "out"}, "cpu": cpu_facts(), "torch": torch.__version__,
              "seconds": {name: spread([r["s"] for r in times]) for name, times in rounds.items()},
              "peak_bytes": {name: max(r["peak_bytes"] for r in times) for name, times in rounds.items()}
              if torch.device(args.device).type == "cuda" else None,
              "ratio_fused_over_eager": {m: ratio_spread(rounds, f"{m}_fused", f"{m}_eager") for m in ("fpa", "offrl")}}
    out = args.out or RESULTS / f"head_fused_{torch.device(args.device).type}.json"
    write_json(out, record)
    print(markdown(record))


def markdown(record: dict) -> str:
    """The record as the table of benchmarks/training/README.md: fused over eager, paired per round."""
    a = record["args"]
    lines = [f"N = {a['tokens']:,} rows, d = {a['hidden']:,}, V = {a['vocab']:,}, chunk {a['chunk']}, {a['precision']} "
             f"products, {a['device']} ({record['cpu']['model']}), torch {record['torch']}; {a['rounds']} paired rounds, "
             "forward + backward of the head.", "",
             "| call | eager s, median | fused s, median | fused / eager, median [min–max] |", "|---|---:|---:|---|"]
    for method, label in (("offrl", "Off-RL (log π_θ)"), ("fpa", "FPA (log π_θ, log π_ref, log π̂)")):
        r, sec = record["ratio_fused_over_eager"][method], record["seconds"]
        lines.append(f"| {label} | {sec[method + '_eager']['median']:.2f} | {sec[method + '_fused']['median']:.2f} "
                     f"| {r['median']:.3f} [{r['min']:.3f}–{r['max']:.3f}] |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
