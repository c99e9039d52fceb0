"""Per-step metrics: the CSV log (and TensorBoard where installed)."""

from __future__ import annotations

import csv
from pathlib import Path

from fpa.io import atomic_path
from fpa.training.stats import DIAGNOSTIC_KEYS


def tensorboard(work: Path):
    """A TensorBoard writer when ``tensorboard`` is installed (optional), else None."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(work / "tensorboard"))


def accumulate(row: dict, values: dict, n: int) -> dict:
    """Mean over micro-batches (counts are summed)."""
    for key, value in values.items():
        share = value if isinstance(value, int) else value / n
        row[key] = row.get(key, 0) + share
    return row


def append_csv(path: Path, row: dict) -> None:
    """Append ``row``; the header is fixed by the first row (plus every diagnostic column)."""
    if path.exists():
        with open(path) as handle:
            fields = handle.readline().strip().split(",")
    else:
        first = ["step", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", "examples_per_s"]
        fields = first + sorted((set(row) | set(DIAGNOSTIC_KEYS)) - set(first))
    with open(path, "a", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields, extrasaction="ignore")
        if handle.tell() == 0:
            writer.writeheader()
        writer.writerow(row)


def truncate_csv(path: Path, step: int) -> None:
    """Drop rows logged after the checkpoint a run resumes from."""
    if not path.exists():
        return
    with open(path, newline="") as handle:
        rows = list(csv.reader(handle))
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        csv.writer(handle).writerows([rows[0]] + [r for r in rows[1:] if int(r[0]) <= step])


def elapsed_by_step(metrics_path: Path) -> dict[int, float]:
    """The run's wall clock (``elapsed_s``, carried over resumes) at each logged step."""
    with open(metrics_path, newline="") as handle:
        return {int(row["step"]): float(row["elapsed_s"]) for row in csv.DictReader(handle)}


def elapsed_at(metrics_path: Path, steps: list[int]) -> dict[str, float]:
    """The run's wall clock when it took each snapshot, by step (the snapshots' provenance)."""
    elapsed = elapsed_by_step(metrics_path)
    return {str(step): elapsed[step] for step in steps}


def throughput(metrics_path: Path, device) -> dict:
    """The run's training throughput and peak memory, for the overhead table: median examples/s and
    tokens/s per process over the logged steps (the first, warming up, left out when there are
    others), and the peak memory: allocated GPU memory on a GPU, else the process's peak RSS."""
    import resource
    import statistics

    import torch

    with open(metrics_path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    steady = rows[1:] or rows
    if device.type == "cuda":
        peak_mb, memory = torch.cuda.max_memory_allocated(device) / 2**20, "gpu"
    else:
        peak_mb, memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss"
    return {"examples_per_s": statistics.median(float(r["examples_per_s"]) for r in steady),
            "tokens_per_s": statistics.median(float(r["tokens_per_s"]) for r in steady),
            "peak_memory_mb": peak_mb, "memory": memory}
