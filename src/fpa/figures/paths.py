"""The DAG's files a figure reads, by run ``(model, method, seed)``. Pure path arithmetic:
planning computes a figure's inputs without importing numpy or pandas."""

from __future__ import annotations


def metrics_path(model: str, method: str, seed: int | str) -> str:
    return f"results/train/{model}/{method}/{seed}/checkpoint/training_metrics.csv"


def curve_path(model: str, method: str, seed: int | str) -> str:
    return f"results/curves/{model}/{method}/{seed}.csv"


def base_curve_path(model: str, seed: int | str) -> str:
    """The base model's curve: the step 0 of every run's curve."""
    return curve_path(model, "base", seed)


def eval_path(model: str, method: str, seed: int | str, bench: str) -> str:
    return f"results/eval/{model}/{method}/{seed}/{bench}.json"


def analysis_path(analysis: str, model: str, method: str, seed: int | str) -> str:
    """An ``fpa.analysis`` result of one run (method ``base``: of the base model)."""
    return f"results/analysis/{analysis}/{model}/{method}/{seed}.csv"


def dataset_path(model: str) -> str:
    """The offline dataset's training split: its provenance (and its inputs') says what generating it cost."""
    return f"results/datasets/{model}/train.jsonl"


def reference_path(model: str) -> str:
    return f"results/reference/{model}/cache"
