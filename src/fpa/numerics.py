"""Portable CPU numerics: the same floating-point results on every CPU of one vendor with AVX2.

On CPU, torch's matmuls go through MKL (and some ops through oneDNN), which pick their
kernels by instruction set (AVX-512 here, AVX2 elsewhere), and torch's own vectorised
kernels are dispatched the same way (``ATEN_CPU_CAPABILITY``). Different kernels round
differently, and the toy experiment amplifies last-bit differences: one flipped sample in
the offline data changes every run downstream. ``docs/archive/toy_calibration.md`` has the measurement (a
base model SFT'd with the AVX2 kernels differs from the AVX-512 one after 150 steps).

Pinning all three to their AVX2 code paths (MKL's Conditional Numerical Reproducibility
``MKL_CBWR=AVX2,STRICT``, ATen's ``avx2`` kernels, oneDNN capped at AVX2) at a fixed
thread count makes the results a function of the inputs only, on every Intel CPU with AVX2
(Haswell and later), at no measurable cost (docs/archive/benchmarks.md). MKL honours its branches on Intel
CPUs only: on an AMD CPU it runs its own kernels whatever the branch but ``COMPATIBLE``
(docs/archive/benchmarks.md has each op's bits under each branch), so AMD CPUs share a world
of their own, and a result is one vendor's (each provenance record names the CPU,
``fpa.provenance.cpu``). ``COMPATIBLE``, the vendor-neutral branch, is the config's
``mkl_cbwr`` (docs/archive/benchmarks.md: what it costs, and what an Intel machine must compare
before it could make one world). A CPU without AVX2 falls back to its own kernels.
The variables are read when torch loads, so the rules export them in the job's shell,
and each output's provenance records them.
"""

from __future__ import annotations

import os
import shlex

PORTABLE_ENV = {"MKL_CBWR": "AVX2,STRICT", "ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def portable_env(mkl_cbwr: str = PORTABLE_ENV["MKL_CBWR"]) -> dict[str, str]:
    """The pin with MKL's branch ``mkl_cbwr`` (the config's ``mkl_cbwr``)."""
    return {**PORTABLE_ENV, "MKL_CBWR": mkl_cbwr}


def portable_env_prefix(mkl_cbwr: str = PORTABLE_ENV["MKL_CBWR"]) -> str:
    """Shell ``export`` statements that pin CPU numerics for the command that follows."""
    return "".join(f"export {name}={shlex.quote(value)}; " for name, value in portable_env(mkl_cbwr).items())


def numerics_record() -> dict:
    """The numerics settings of this process, for provenance."""
    return {name: os.environ.get(name) for name in PORTABLE_ENV}
