"""benchmarks/numerics/head_precision.py, the evidence for ``training.head_precision: auto`` (bf16 products on CUDA),
at a small shape: bf16 products with fp32 sums keep FPA's and Off-RL's weights and log π_θ within the
bound (twice the error of the bf16 cache itself)."""

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from numerics import head_precision  # noqa: E402


def test_bf16_products_with_fp32_sums_stay_within_the_bound():
    x = head_precision.head_inputs(sequences=64, length=16, hidden=256, vocab=4096, logit_std=3.0)
    errors = head_precision.precision_errors(x)
    assert all(errors[name]["within_bound"] for name in ("fp32", "tf32", "bf16")), errors
    assert errors["fp32"]["rms_abs_logp"] < 1e-5 < errors["tf32"]["rms_abs_logp"] < errors["bf16"]["rms_abs_logp"]


def test_tf32_emulation_keeps_ten_mantissa_bits_rounded_to_nearest():
    x = torch.tensor([1 + 2**-10, 1 + 2**-11 + 2**-13, 1 + 2**-12, -3.0])
    assert head_precision._to_tf32(x).tolist() == [1 + 2**-10, 1 + 2**-10, 1.0, -3.0]
