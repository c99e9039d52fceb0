"""The loss head's precision (training.head_precision) against an fp64 head, on a GPU.

Per-token log π_θ(y) and FPA's log π̂_λ (λ = 20) of the chunked head under fp32, tf32 and bf16
products, at Qwen3-4B's shapes (d = 2560, V = 151,936) with hidden states and a head scaled to a
real model's logit spread; prints the largest and mean absolute error against fp64 per setting.

    python benchmarks/numerics/head_precision.py [--tokens 2048]
"""

from __future__ import annotations

import argparse
import json

import torch

from fpa.training.head import token_statistics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--hidden", type=int, default=2560)
    parser.add_argument("--vocab", type=int, default=151936)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = "cuda"
    weight = torch.randn(args.vocab, args.hidden, device=device) * 0.02
    hidden = torch.randn(args.tokens, args.hidden, device=device) * 2.0
    ref_hidden = hidden + 0.05 * torch.randn_like(hidden)
    targets = torch.randint(0, args.vocab, (args.tokens,), device=device)
    exact = token_statistics(hidden.double(), weight.double(), targets, ref_hidden=ref_hidden.double(),
                             ref_weight=weight.double(), lam=20.0, chunk_size=512)
    rows = {}
    for precision in ("fp32", "tf32", "bf16"):
        stats = token_statistics(hidden, weight, targets, ref_hidden=ref_hidden, ref_weight=weight, lam=20.0,
                                 chunk_size=512, head_precision=precision)
        rows[precision] = {name: {"max": (getattr(stats, name).double() - getattr(exact, name)).abs().max().item(),
                                  "mean": (getattr(stats, name).double() - getattr(exact, name)).abs().mean().item()}
                           for name in ("logp", "hat_logp")}
    print(json.dumps({"device": torch.cuda.get_device_name(), "shape": vars(args), "abs_error_vs_fp64": rows},
                     indent=1))


if __name__ == "__main__":
    main()
