"""The paper's overhead table (config/paper_results.yaml) that the GPU record is set beside, and the
GPUs it was measured on."""

from __future__ import annotations

from pathlib import Path

import yaml

PAPER_RESULTS = Path(__file__).resolve().parents[2] / "config" / "paper_results.yaml"
#: "We conduct all training on a single node with two NVIDIA H200 GPUs" (the paper's training details)
PAPER_GPUS = 2


def paper_overhead(model: str = "qwen3-4b-base") -> dict:
    """{run: (examples/s, peak "GB")} as the paper prints them (config/paper_results.yaml)."""
    rows = yaml.safe_load(PAPER_RESULTS.read_text())["overhead"]["models"][model]
    return {run: tuple(float(x) for x in cells.split()) for run, cells in rows.items()}
