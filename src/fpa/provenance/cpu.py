"""The CPU a job ran on and the math libraries it ran with: what decides its floating-point bits.

The toy's table is a function of the config and the seeds on one CPU vendor, not across
vendors: MKL picks its kernels by vendor as well as by instruction set (``fpa.numerics``,
docs/archive/benchmarks.md). So every provenance record names the vendor, the model, the
instruction-set extensions the kernels dispatch on, and torch's MKL and oneDNN versions.
"""

from __future__ import annotations

import functools
import platform
import re
import sys
from pathlib import Path

#: The /proc/cpuinfo flags that change which kernels MKL, oneDNN and ATen run (AMX: oneDNN's bf16/int8 paths).
KERNEL_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512dq", "avx512cd", "avx512bw", "avx512vl", "avx512_vnni",
                "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")
#: Short names of the vendors met so far, for file names (a record per vendor)
VENDOR_NAMES = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}
MKL_VERSION = re.compile(r"Math Kernel Library Version ([\w.]+)")
ONEDNN_VERSION = re.compile(r"MKL-DNN (v\S+)")


def parse_cpuinfo(text: str) -> dict:
    """Vendor, model name and the kernel-relevant flags of the first processor in ``/proc/cpuinfo`` text."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the first processor's block ends at the first blank line
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    flags = set(fields.get("flags", "").split())
    return {"vendor": fields.get("vendor_id"), "model": fields.get("model name"),
            "flags": [flag for flag in KERNEL_FLAGS if flag in flags]}


def torch_math_libraries(torch) -> dict:
    """torch's version, the ATen kernels it dispatches to, and the MKL and oneDNN it was built with."""
    built = torch.__config__.show()
    mkl, onednn = MKL_VERSION.search(built), ONEDNN_VERSION.search(built)
    return {"torch": torch.__version__, "aten_cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "mkl": mkl[1] if mkl and torch.backends.mkl.is_available() else None,
            "onednn": onednn[1] if onednn and torch.backends.mkldnn.is_available() else None}


def vendor_name(vendor: str | None) -> str:
    """``intel``, ``amd``, or ``other``: the vendor's part of a per-vendor record's name."""
    return VENDOR_NAMES.get(vendor, "other")


@functools.cache
def _hardware() -> dict:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        return parse_cpuinfo(cpuinfo.read_text())
    return {"vendor": None, "model": platform.processor() or platform.machine(), "flags": []}


def cpu_facts() -> dict:
    """This machine's CPU, and torch's math libraries if this process loaded torch (a job that never
    imported it ran no kernel of theirs, and importing it here would cost every such job a second)."""
    torch = sys.modules.get("torch")
    return {**_hardware(), "libraries": torch_math_libraries(torch) if torch is not None else None}
