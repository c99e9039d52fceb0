"""The loss head's chunk passes fused (``token_statistics(fused=True)``, torch.compile) against the eager ones.

    python benchmarks/head_fused.py                  # CPU; writes benchmarks/results/head_fused_cpu.json
    python benchmarks/head_fused.py --device cuda --hidden 2560 --vocab 151936 --precision bf16

FPA's call as the trainer makes it (fp32 policy states and head, the bf16 cache with its logsumexp,
λ = 2), forward and backward of Σ log π_θ, and Off-RL's (no reference); each fused and eager, in
paired rounds (order rotated per round, one warm-up call each, compiling the fused ones). Reports
per-round seconds, the fused / eager ratio per round (median and range) and, on CUDA, peak memory.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from gpu.clock import paired_rounds, ratio_spread, spread

from fpa.io import write_json
from fpa.training.head import token_statistics

ROOT = Path(__file__).resolve().parents[1]


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
    record = {"args": {k: v for k, v in vars(args).items() if k != "out"},
              "seconds": {name: spread([r["s"] for r in times]) for name, times in rounds.items()},
              "peak_bytes": {name: max(r["peak_bytes"] for r in times) for name, times in rounds.items()}
              if torch.device(args.device).type == "cuda" else None,
              "ratio_fused_over_eager": {m: ratio_spread(rounds, f"{m}_fused", f"{m}_eager") for m in ("fpa", "offrl")}}
    out = args.out or ROOT / "benchmarks" / "results" / f"head_fused_{torch.device(args.device).type}.json"
    write_json(out, record)
    print(record)


if __name__ == "__main__":
    main()
