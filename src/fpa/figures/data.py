"""What figures read: per-step training metrics and per-snapshot accuracy, aligned over seeds.

A run is ``(model, method, seed)``; its files are those the DAG writes:
``results/train/<model>/<method>/<seed>/checkpoint/training_metrics.csv``,
``results/curves/<model>/<method>/<seed>.csv`` and, for step 0 of a curve, the base
model's ``results/curves/<model>/base/<seed>.csv``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd



def metrics_path(model: str, method: str, seed: int | str) -> str:
    return f"results/train/{model}/{method}/{seed}/checkpoint/training_metrics.csv"


def curve_path(model: str, method: str, seed: int | str) -> str:
    return f"results/curves/{model}/{method}/{seed}.csv"


def eval_path(model: str, method: str, seed: int | str, bench: str) -> str:
    return f"results/eval/{model}/{method}/{seed}/{bench}.json"


def read_evals(paths: Sequence[str]) -> np.ndarray:
    """Pass@1 in % of each seed's final evaluation."""
    import json

    return np.array([json.loads(Path(path).read_text())["pass_at_1"] * 100 for path in paths])


def base_curve_path(model: str, seed: int | str) -> str:
    return curve_path(model, "base", seed)


def read_metrics(paths: Sequence[str], column: str, *, smooth: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(steps, [seeds, steps] values) of one metric column, a trailing moving mean over ``smooth`` steps.

    Seeds are cut to the shortest run (early stopping may end runs at different steps).
    """
    frames = [pd.read_csv(path) for path in paths]
    missing = [path for path, frame in zip(paths, frames) if column not in frame.columns]
    if missing:
        raise ValueError(f"{missing[0]}: no column {column!r} (expected a training_metrics.csv of fpa train)")
    length = min(len(frame) for frame in frames)
    values = np.stack([frame[column].to_numpy(dtype=float)[:length] for frame in frames])
    if smooth > 1:
        values = np.stack([pd.Series(row).rolling(smooth, min_periods=1).mean().to_numpy() for row in values])
    return frames[0]["step"].to_numpy()[:length], values


def _curve(path: str, bench: str) -> tuple[list[int], list[float]]:
    frame = pd.read_csv(path)
    frame = frame[frame["benchmark"] == bench].sort_values("step")
    if frame.empty:
        raise ValueError(f"{path}: no rows for benchmark {bench!r}")
    return list(frame["step"]), list(frame["pass_at_1"])


def read_curves(paths: Sequence[str], bench: str, base_curves: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
    """(steps, [seeds, steps] Pass@1 in %) on ``bench``, with step 0 from the base model's curves if given."""
    per_seed = []
    for index, path in enumerate(paths):
        steps, values = _curve(path, bench)
        if base_curves:
            base_steps, base_values = _curve(base_curves[index], bench)
            steps, values = base_steps + steps, base_values + values
        per_seed.append((steps, values))
    common = sorted(set.intersection(*(set(steps) for steps, _ in per_seed)))
    values = np.array([[dict(zip(steps, vals))[s] for s in common] for steps, vals in per_seed]) * 100
    return np.array(common), values


def run_label(path: str) -> str:
    return "/".join(Path(path).parts[-5:-2])
