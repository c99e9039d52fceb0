"""Constructed runs for figures: the files the DAG would have written for a figure's slice
(``fpa.planning.figures.figure_slice``), at the DAG's own paths (``fpa.paths``), in the
working directory."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

from fpa.figures import FIGURES
from fpa.paths import ANALYSIS, CURVE, EVALUATION, REFERENCE_CACHE, SAMPLES, TOY_MODEL, TRAIN_SPLIT, TRAINING_METRICS
from fpa.training.stats import DIAGNOSTIC_KEYS

# per variant of the entanglement analysis, its trajectories' tokens: the offline data's full
# trajectories and the same pairs cut to their answer, and a preference dataset's (the paper's pilot)
ENTANGLEMENT_TOKENS = {"full": 60, "answer_only": 5, "imdb": 1}


def write_run(model, method, seed, benchmarks=("toy6",), curve_benchmark="toy6", steps=40):
    """A run's per-step metrics, its curve every 10 steps (and the base model's, step 0) and its final
    evaluation on each of ``benchmarks``."""
    path = Path(TRAINING_METRICS.format(model=model, method=method, seed=seed))
    fields = ["step", "elapsed_s", "loss", "val_loss", "lr", "grad_norm", "tokens_per_s", *DIAGNOSTIC_KEYS]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for step in range(1, steps + 1):
            row = {key: 0.5 + 0.01 * (seed % 5) * math.sin(step) for key in fields}
            row.update(step=step, elapsed_s=2.0 * step,
                       **{"weight_below_0.2": step % 3, "hat_weight_below_0.2": step % 2})
            writer.writerow(row)
    header = "step,benchmark,pass_at_1,n_problems,n\n"
    curve = Path(CURVE.format(model=model, method=method, seed=seed))
    curve.parent.mkdir(parents=True, exist_ok=True)
    curve.write_text(header + "".join(f"{step},{curve_benchmark},{0.5 + step / (5 * steps) + seed % 5 / 100},4,2\n"
                                      for step in range(10, steps + 1, 10)))
    for bench in benchmarks:
        evaluation = Path(EVALUATION.format(model=model, method=method, seed=seed, bench=bench))
        evaluation.parent.mkdir(parents=True, exist_ok=True)
        evaluation.write_text(json.dumps({"pass_at_1": 0.6 + 0.01 * (seed % 5)}))
    base_curve = Path(CURVE.format(model=model, method="base", seed=seed))
    base_curve.parent.mkdir(parents=True, exist_ok=True)
    base_curve.write_text(header + f"0,{curve_benchmark},0.5,4,2\n")


def write_stages(model):
    """The offline dataset, its samples, the base model and the reference cache, with what each job cost:
    a run waits 100 s of sampling + 10 s of splitting (+ 20 s of reference cache), not the base model's 1000 s."""
    def job(path, rule, wall_s, **inputs):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(rule)
        Path(path + ".prov.json").write_text(json.dumps({
            "rule": rule, "usage": {"wall_s": wall_s, "cpu_s": wall_s, "gpus": 0, "gpu_s": 0.0},
            "inputs": {name: {"path": source, "sha256": "0"} for name, source in inputs.items()}}))

    base, samples, train = (template.format(model=model) for template in (TOY_MODEL, SAMPLES, TRAIN_SPLIT))
    job(base, "toy_base_model", 1000.0)
    job(samples, "sample_offline", 100.0, model=base)
    job(train, "build_dataset", 10.0, samples=samples)
    job(REFERENCE_CACHE.format(model=model), "cache_reference", 20.0, model=base, train=train)


def write_analysis(analysis, model, method, seed, tokens=ENTANGLEMENT_TOKENS, anchor=10, targets=(20, 40)):
    """A constructed ``fpa future-policy`` or ``fpa entanglement`` CSV; ``tokens``: per entanglement
    variant, how long its trajectories are."""
    path = Path(ANALYSIS[analysis].format(model=model, method=method, seed=seed))
    path.parent.mkdir(parents=True, exist_ok=True)
    if analysis == "future_policy":
        rows = [{"anchor_step": anchor, "target_step": target, "lam": lam,
                 "kl_per_token": abs(lam - target / (2 * anchor)) + seed % 5,
                 "kl_per_sequence": 30 * abs(lam - target / (2 * anchor)) + 1, "tokens": 300, "sequences": 10}
                for target in targets for lam in (0, 1, 2, 5)]
    else:
        # each variant's cosines in [-1, 1] and its norms a decade apart from the previous variant's
        rows = [{"variant": variant, "problem_id": f"p{i}", "cosine": -0.5 + 0.3 * index + 0.05 * i - 0.02 * (seed % 5),
                 "norm_correct": (1 + i) * 10 ** index, "norm_incorrect": (2 + i) * 10 ** index,
                 "tokens_correct": length, "tokens_incorrect": length + i}
                for index, (variant, length) in enumerate(tokens.items()) for i in range(5)]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_slice_inputs(name, slice_, config, tokens=ENTANGLEMENT_TOKENS):
    """Every file figure ``name`` reads for ``slice_`` of ``config``, constructed."""
    figure, model = FIGURES[name], slice_["model"]
    write_stages(model)
    settings = config.get("future_policy") or {}
    for method in slice_["files"].values():
        for seed in slice_["seeds"]:
            write_run(model, method, seed, slice_["benchmarks"], slice_["curve_benchmark"] or "none")
            if figure.analysis:
                write_analysis(figure.analysis, model, method, seed, tokens, settings.get("anchor_step") or 10,
                               settings.get("target_steps") or (20, 40))
