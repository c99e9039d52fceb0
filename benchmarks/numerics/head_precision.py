"""The loss head's precision against float64, on the CPU: the evidence for ``training.head_precision: auto``.

    python benchmarks/numerics/head_precision.py    # writes benchmarks/numerics/results/head_precision_cpu.json (about 4 min, 2 cores)
    python benchmarks/numerics/head_precision.py --hidden 256 --vocab 8192 --out /tmp/head_precision.json

The default shape: Qwen3-4B's d = 2560 (the length of each logit's sum, which the rounding errors
grow with), 16 sequences of 64 tokens, and V = 32,768 rather than 151,936: a float64 head at the
full V is 3 GB a matrix, more than this CPU's share; V enters the errors only through the
logsumexp's average over the vocabulary.

Inputs (seeded): S sequences of L completion tokens; z_θ ~ N(0, 1) [N, d] and a head W [V, d] giving
logits of a real model's spread (std ``--logit-std``); the reference moved from the policy as after
training (z_ref = z_θ + 0.3·noise, W_ref = W + 0.25·|W|-scaled noise) and cached in bf16, as
``cache_reference`` stores it; targets drawn from π_θ (a model's own samples); λ = 20, the sweep's
largest (π̂'s error grows with λ).
Settings, each the head as the trainer calls it (fp32 policy states and head, the bf16 cache):
``fp32``, ``bf16`` (bf16 products, fp32 softmax and sums), ``tf32`` emulated (CPUs have no TF32:
inputs rounded to its 10-bit mantissa, fp32 products, as tensor cores take them), and the yardstick
``bf16_storage``: float64 products of z_θ and z_ref rounded to bf16, the error the bf16 cache
already admits into FPA's weights. Errors against float64 of the unrounded inputs, their max and
root mean square: |Δ log π_θ| per token (Off-RL's call) and the relative error of π̂_λ(y|x)^(1/|y|)
(FPA's weight) and of π_θ(y|x)^(1/|y|) (Off-RL's) per sequence.
Bound: a precision keeps FPA's weights if each root-mean-square error is within ``BOUND_FACTOR``
times the yardstick's (bf16 products round W and W_ref as the cache rounds z_θ and z_ref: errors of
the same size, √2 in quadrature). The mean square, not the max: the loss averages its weights over
the batch, and the max over a few sequences swings by 2x from one draw to the next.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from fpa.io import write_json
from fpa.objectives.offrl import sequence_weight
from fpa.provenance.cpu import cpu_facts
from fpa.training.head import token_statistics

RESULTS = Path(__file__).resolve().parent / "results"
LAM = 20.0
BOUND_FACTOR = 2.0
BOUNDED = ("rms_abs_logp", "rms_rel_fpa_weight", "rms_rel_offrl_weight")


def head_inputs(sequences: int, length: int, hidden: int, vocab: int, logit_std: float, seed: int = 0) -> dict:
    """float64 policy and reference at one micro-batch's completion tokens; targets drawn from π_θ."""
    g = torch.Generator().manual_seed(seed)
    n = sequences * length

    def randn(*size):
        return torch.randn(*size, generator=g, dtype=torch.float64)

    z = randn(n, hidden)
    weight = randn(vocab, hidden) * (logit_std / hidden**0.5)
    probs = (z.float() @ weight.float().T).softmax(-1)
    return {"hidden": z, "weight": weight, "ref_hidden": z + 0.3 * randn(n, hidden),
            "ref_weight": weight + 0.25 * randn(vocab, hidden) * (logit_std / hidden**0.5),
            "targets": torch.multinomial(probs, 1, generator=g).squeeze(1), "sequences": sequences}


def _to_tf32(x: torch.Tensor) -> torch.Tensor:
    """fp32 rounded to nearest on TF32's 10 mantissa bits (the 13 low bits cleared), as tensor cores read it."""
    bits = x.float().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def _statistics(x: dict, dtypes: tuple, head_precision: str = "fp32", cast=None, chunk: int = 256) -> dict:
    """log π_θ of Off-RL's call, π̂'s and π_θ's per-sequence weights: inputs in ``dtypes`` (hidden, weight,
    ref_hidden), ``cast`` applied to every input first (the TF32 emulation)."""
    cast = cast or (lambda t: t)
    hidden, weight, ref_weight = (cast(x[k]).to(dtype) for k, dtype in zip(("hidden", "weight", "ref_weight"),
                                                                            (dtypes[0], dtypes[1], dtypes[1])))
    ref_hidden = cast(x["ref_hidden"].to(dtypes[2]).to(x["ref_hidden"].dtype)).to(dtypes[2])
    off_rl = token_statistics(hidden, weight, x["targets"], chunk_size=chunk, head_precision=head_precision)
    fpa = token_statistics(hidden, weight, x["targets"], ref_hidden=ref_hidden, ref_weight=ref_weight, lam=LAM,
                           chunk_size=chunk, head_precision=head_precision)

    def weights(logp):
        per_sequence = logp.double().view(x["sequences"], -1)
        return sequence_weight(per_sequence.sum(1), torch.full((x["sequences"],), per_sequence.shape[1]))

    return {"logp": off_rl.logp.double(), "fpa_weight": weights(fpa.hat_logp), "offrl_weight": weights(off_rl.logp)}


def _errors(got: dict, exact: dict) -> dict:
    """max and root-mean-square of |Δ log π_θ| per token and of each weight's relative error per sequence."""
    deviations = {"abs_logp": got["logp"] - exact["logp"],
                  **{f"rel_{name}": (got[name] - exact[name]) / exact[name] for name in ("fpa_weight", "offrl_weight")}}
    return {f"{stat}_{name}": float(fn(d)) for name, d in deviations.items()
            for stat, fn in (("max", lambda d: d.abs().max()), ("rms", lambda d: d.pow(2).mean().sqrt()))}


def precision_errors(x: dict) -> dict:
    """Each setting's errors against float64, and whether it is within the bound."""
    f64, f32, bf16 = torch.float64, torch.float32, torch.bfloat16
    with torch.no_grad():
        exact = _statistics(x, (f64, f64, f64))
        settings = {
            "bf16_storage": _statistics({**x, "hidden": x["hidden"].to(bf16).double()}, (f64, f64, bf16)),
            "fp32": _statistics(x, (f32, f32, bf16)),
            "tf32": _statistics(x, (f32, f32, bf16), cast=_to_tf32),
            "bf16": _statistics(x, (f32, f32, bf16), head_precision="bf16"),
        }
    errors = {name: _errors(got, exact) for name, got in settings.items()}
    yardstick = errors["bf16_storage"]
    for name in ("fp32", "tf32", "bf16"):
        errors[name]["within_bound"] = all(errors[name][e] <= BOUND_FACTOR * yardstick[e] for e in BOUNDED)
    return errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=16)
    parser.add_argument("--length", type=int, default=64, help="completion tokens per sequence")
    parser.add_argument("--hidden", type=int, default=2560)
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--logit-std", type=float, default=3.0)
    parser.add_argument("--out", type=Path, default=RESULTS / "head_precision_cpu.json")
    args = parser.parse_args()
    x = head_inputs(args.sequences, args.length, args.hidden, args.vocab, args.logit_std)
    errors = precision_errors(x)
    record = {"benchmark": "head_precision", "shape": {k: v for k, v in vars(args).items() if k != "out"}, "lam": LAM, "bound_factor": BOUND_FACTOR,
              "cpu": cpu_facts(), "torch": torch.__version__, "errors": errors}
    write_json(args.out, record)
    print(markdown(record))


def markdown(record: dict) -> str:
    """The record as the table of benchmarks/numerics/README.md: RMS (max) errors of each precision."""
    shape, cpu = record["shape"], record["cpu"]
    lines = [f"{shape['sequences']} sequences x {shape['length']} tokens, d = {shape['hidden']:,}, V = {shape['vocab']:,}, "
             f"lambda = {record['lam']:g}, reference cached in bf16; {cpu['model']}, torch {record['torch']}. "
             f"Errors against float64, root mean square (max); a precision keeps FPA's weights when every RMS error is "
             f"within {record['bound_factor']:g}x the bf16 cache's own (bf16_storage).", "",
             "| head products | abs. error of log π_θ per token | rel. error of FPA's weight | rel. error of Off-RL's weight "
             "| within the bound |", "|---|---|---|---|---|"]
    for name, e in record["errors"].items():
        bound = {True: "yes", False: "no"}.get(e.get("within_bound"), "(the yardstick)")
        lines.append(f"| {name} | {e['rms_abs_logp']:.2e} ({e['max_abs_logp']:.2e}) | {e['rms_rel_fpa_weight']:.2e} "
                     f"({e['max_rel_fpa_weight']:.2e}) | {e['rms_rel_offrl_weight']:.2e} ({e['max_rel_offrl_weight']:.2e}) "
                     f"| {bound} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
