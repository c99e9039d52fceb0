"""What figures read: per-step training metrics, per-snapshot accuracy and final evaluations,
aligned over seeds (the files are named by ``fpa.paths``)."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from fpa.io import read_json
from fpa.provenance.record import read_record


def read_evals(paths: Sequence[str]) -> np.ndarray:
    """Pass@1 in % of each seed's final evaluation."""
    return np.array([read_json(path)["pass_at_1"] * 100 for path in paths])


# stages of fpa.aggregation.cost whose jobs a run waits for before it trains
PRE_TRAINING_STAGES = ("data generation", "reference cache")


def stage_seconds(paths: Sequence[str]) -> float:
    """Wall seconds of the jobs in a pre-training stage that wrote ``paths`` or, walking back
    through their inputs, anything upstream of them (the dataset's sampling behind its split),
    each job counted once: what a run waits for before it trains. From the records' ``usage``;
    the walk stops at jobs of other stages (the base model, the problems)."""
    from fpa.aggregation.cost import STAGES

    seen, total, pending = set(), 0.0, list(paths)
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        record = read_record(path)
        if record is None or STAGES.get(record["rule"]) not in PRE_TRAINING_STAGES:
            continue
        if "usage" not in record:
            raise ValueError(f"{path}.prov.json: no 'usage' (what the job cost): written before fpa-bench recorded "
                             "it; re-run the job that writes it")
        total += record["usage"]["wall_s"]
        pending += [entry["path"] for entry in record["inputs"].values()]
    return total


def read_elapsed(path: str, steps: Sequence[int]) -> np.ndarray:
    """A run's wall clock (``elapsed_s`` of its training_metrics.csv) at each of ``steps``; 0 at step 0."""
    frame = pd.read_csv(path)
    if "elapsed_s" not in frame.columns:
        raise ValueError(f"{path}: no column 'elapsed_s' (the run's wall clock): trained before fpa-bench recorded "
                         "it; re-run its training")
    elapsed = dict(zip(frame["step"].astype(int), frame["elapsed_s"].astype(float)))
    missing = [step for step in steps if step and step not in elapsed]
    if missing:
        raise ValueError(f"{path}: no row for step {missing[0]}")
    return np.array([elapsed.get(step, 0.0) for step in steps])


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
