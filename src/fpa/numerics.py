"""Portable CPU numerics: the same floating-point results on any x86-64 CPU.

On CPU, torch's matmuls go through MKL, which picks its kernels by instruction set
(AVX-512 here, AVX2 elsewhere), and torch's own vectorised kernels are dispatched
the same way (``ATEN_CPU_CAPABILITY``). Different kernels round differently, and the
toy experiment amplifies last-bit differences: one flipped sample in the offline data
changes every run downstream. ``docs/toy.md`` has the measurement (a base model SFT'd
with the AVX2 kernels differs from the AVX-512 one after 150 steps).

Pinning both to their portable code paths (MKL's Conditional Numerical Reproducibility
``MKL_CBWR=COMPATIBLE,STRICT`` and ATen's ``default`` kernels) at a fixed thread count
makes the results a function of the inputs only. It costs about 2x in CPU time, so the
workflow pins the jobs whose results everything downstream inherits, the toy base model
and the offline samples; training and evaluation then differ across machines only as
seeds do. The variables are read when torch loads, so the rules export them in the job's
shell, and each output's provenance records them.
"""

from __future__ import annotations

import os

PORTABLE_ENV = {"MKL_CBWR": "COMPATIBLE,STRICT", "ATEN_CPU_CAPABILITY": "default"}


def portable_env_prefix() -> str:
    """Shell ``export`` statements that pin CPU numerics for the command that follows."""
    return "".join(f"export {name}={value}; " for name, value in PORTABLE_ENV.items())


def numerics_record() -> dict:
    """The numerics settings of this process, for provenance."""
    return {name: os.environ.get(name) for name in PORTABLE_ENV}
