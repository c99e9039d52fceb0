"""benchmarks/numerics/lambda_zero.py at a tiny toy shape: under the default config's dtypes (config/config.yaml,
its reference cache dtype from the plan) FPA at λ = 0 is Off-RL, bit for bit in the gradient of every trainable
parameter, both within fp32 rounding of float64; a cache narrower than the head's products is not."""

import sys
from pathlib import Path

import pytest

from fpa.toy.settings import ToyModelConfig

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from numerics import lambda_zero  # noqa: E402

# fp32 against float64 over the whole forward and backward: ~4e-6 of the largest gradient at the toy's shape
FP32_REL = 1e-4


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    config = lambda_zero.default_config()
    shape = ToyModelConfig(d_model=64, n_heads=1, n_layers=1, d_ff=128)
    return config, lambda_zero.lambda_zero_gradients(tmp_path_factory.mktemp("lambda_zero"), shape, 3, 4, config)


def test_fpa_at_lambda_zero_is_off_rl_bit_for_bit_under_the_default_config(measured):
    config, result = measured
    row = result["caches"][config["cache_dtype"]]
    assert row["fpa_minus_offrl"]["bitwise_equal"], row
    assert row["offrl_minus_float64"]["max_rel"] < FP32_REL and row["fpa_minus_float64"]["max_rel"] < FP32_REL, row


def test_a_cache_narrower_than_the_products_rounds_fpas_policy_alone(measured):
    """The check above can fail: a bf16 cache under fp32 products (the default before) parts FPA(λ = 0) from
    Off-RL by bf16's rounding of z_θ, far above fp32's."""
    _, result = measured
    row = result["caches"]["bfloat16"]
    assert row["fpa_minus_offrl"]["max_rel"] > 10 * FP32_REL and row["fpa_minus_float64"]["max_rel"] > 10 * FP32_REL
