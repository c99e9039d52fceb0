"""Portable CPU numerics (fpa.numerics): the toy base model's SFT gives the same weights whichever
instruction set MKL may use. ``MKL_ENABLE_INSTRUCTIONS=AVX2`` stands in for an older x86 CPU.

Slow: two SFT runs in fresh processes, past the fast tier's CPU budget (docs/testing.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fpa.numerics import PORTABLE_ENV

BUILD = """
import hashlib, sys
from safetensors.torch import load_file
from fpa.toy.model import build_toy_model
from fpa.toy.settings import ToyModelConfig
cfg = ToyModelConfig(n_train_problems=200, d_model=64, n_heads=1, n_layers=2, d_ff=128, steps=30, batch_size=16,
                     warmup_steps=3, log_every=10)
build_toy_model(sys.argv[1], cfg, threads=2)
weights = load_file(sys.argv[1] + "/model.safetensors")
print(hashlib.sha256(b"".join(weights[k].numpy().tobytes() for k in sorted(weights))).hexdigest())
"""


def _weights_hash(tmp_path, name, env) -> str:
    clean = {k: v for k, v in os.environ.items() if k not in (*PORTABLE_ENV, "MKL_ENABLE_INSTRUCTIONS")}
    done = subprocess.run([sys.executable, "-c", BUILD, str(tmp_path / name)], env={**clean, **env},
                          capture_output=True, text=True, check=True, timeout=600)
    return done.stdout.split()[-1]


@pytest.mark.slow
def test_portable_numerics_do_not_depend_on_the_instruction_set(tmp_path):
    native = _weights_hash(tmp_path, "native", PORTABLE_ENV)
    older_cpu = _weights_hash(tmp_path, "avx2", {**PORTABLE_ENV, "MKL_ENABLE_INSTRUCTIONS": "AVX2"})
    assert native == older_cpu
