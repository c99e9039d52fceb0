"""The precision policy: the floating-point formats the project computes and stores in, one name each,
and which format each use takes.

A format is named ``bf16``, ``fp16`` or ``fp32`` (``training.precision``'s spelling). Some values are
written in torch's names (``bfloat16``, ``float16``, ``float32``): ``training.fsdp_param_dtype``, and the
dtypes rule cache_reference passes and its cache records in its key; they are read here (``format_of``)
and kept as they are, so that no cache key of a run made before changes.

The uses:

- the body's forward (``training.precision``): ``bf16`` runs under bf16 autocast over fp32 weights,
  ``fp32`` without autocast (``autocast_dtype``);
- the weights FSDP gathers and computes with (``fpa.memory.training.fsdp_param_dtype``), and the
  reference cache's model loaded in them (``compute_weights_dtype``);
- HF-format weights on disk (snapshots, the final checkpoint): the run's ``training.precision``;
- the reference cache's stored z_ref: one of ``CACHE_FORMATS`` (``reference_cache_dtype``);
- the loss head's products (``training.head_precision``): one of ``HEAD_PRODUCTS`` (``tf32`` is a
  mode of fp32 products on CUDA's tensor cores, no storage format).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    bytes: int  # per element
    torch_name: str  # torch's dtype name (``torch.<name>``), as HF, FSDP and vLLM spell it


#: every format, by its one name
FORMATS = {"bf16": Format(2, "bfloat16"), "fp16": Format(2, "float16"), "fp32": Format(4, "float32")}
#: the formats ``training.precision`` computes the body in (and saves its weights in)
BODY_FORMATS = ("bf16", "fp32")
#: the formats FSDP may gather the weights in (``training.fsdp_param_dtype``)
GATHER_FORMATS = ("bf16", "fp32")
#: the formats the reference cache may store z_ref in
CACHE_FORMATS = ("bf16", "fp16", "fp32")
#: the loss head's products: fp32 exact, tf32 (CUDA's TF32 tensor cores, exact elsewhere), bf16
HEAD_PRODUCTS = ("fp32", "tf32", "bf16")
_BY_TORCH_NAME = {spec.torch_name: name for name, spec in FORMATS.items()}


def format_of(name: str, allowed: tuple[str, ...] = tuple(FORMATS), what: str = "dtype") -> str:
    """The format ``name`` (ours, or torch's name of it) names, among ``allowed``; a ``ValueError``
    naming ``what`` otherwise."""
    chosen = _BY_TORCH_NAME.get(name, name)
    if chosen not in allowed:
        raise ValueError(f"{what}: expected one of {[*allowed, *(FORMATS[f].torch_name for f in allowed)]}, "
                         f"got {name!r}")
    return chosen


def torch_name(name: str) -> str:
    """Torch's name of the format ``name``, as a command line and a cache record take it."""
    return FORMATS[format_of(name)].torch_name


def element_bytes(name: str) -> int:
    """Bytes per element of the format ``name``."""
    return FORMATS[format_of(name)].bytes


def torch_dtype(name: str, allowed: tuple[str, ...] = tuple(FORMATS), what: str = "dtype"):
    """The ``torch.dtype`` of the format ``name`` among ``allowed``."""
    import torch  # the planner reads the names and sizes above without loading torch

    return getattr(torch, FORMATS[format_of(name, allowed, what)].torch_name)


def autocast_dtype(precision: str):
    """The dtype the body's forward autocasts to under ``training.precision``: bf16, or None (fp32)."""
    chosen = format_of(precision, BODY_FORMATS, "training.precision")
    return None if chosen == "fp32" else torch_dtype(chosen)
