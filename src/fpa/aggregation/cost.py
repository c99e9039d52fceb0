"""Cost by stage: what each job of a run cost, from Snakemake's own ``benchmark:`` records.

Every rule writes ``logs/benchmarks/<rule>/<wildcards>.tsv`` (wall s, CPU s, max RSS, ...
as Snakemake measures them, `snakemake.benchmark`). Snakemake samples a job's CPU time every
0.5 s for its first 15 s, then every 30 s, so its ``cpu_time`` misses up to 30 s of a longer
job; the CPU seconds are therefore the exact ones the job's ``fpa`` command wrote as the last
line of its log (``logs/<rule>/<wildcards>.log``), and Snakemake's only for a log without one.
This module sums them per run and stage, so the overhead table and the wall-clock comparison
read measured figures instead of timing again. Jobs shared by every run of a model (offline data,
reference cache) are their own rows (method ``(shared)``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Iterable

import pandas as pd

from fpa.aggregation.escape import markdown_text

BENCHMARK_ROOT = Path("logs/benchmarks")
SHARED = "(shared)"
# rule -> stage; a rule not listed is reported under its own name
STAGES = {
    "toy_base_model": "base model", "fetch_model": "base model",
    "sample_offline": "data generation", "build_dataset": "data generation", "step_dpo_dataset": "data generation",
    "cache_reference": "reference cache", "train": "training", "train_online": "training",
    "evaluate": "evaluation", "curve": "evaluation", "generate_code": "evaluation",
    "evaluate_code": "grading (sandbox)", "future_policy": "analysis", "entanglement": "analysis",
}
# rules whose wildcards start with {model}/{method}/{seed}: costs of one run
RUN_RULES = {"train", "train_online", "evaluate", "curve", "generate_code", "evaluate_code", "future_policy"}
# rules whose first wildcard is {model}: shared by the model's runs
MODEL_RULES = {"toy_base_model", "fetch_model", "sample_offline", "build_dataset", "step_dpo_dataset",
               "cache_reference", "entanglement"}
CAPTION = ("wall and CPU seconds summed over the stage's jobs, largest max RSS in MB; wall and RSS from Snakemake "
           "benchmark: records, CPU seconds as each job's fpa command reported them in its log (the process and its "
           "finished children)")
COLUMNS = ("model", "method", "seed", "stage", "jobs", "wall_s", "cpu_s", "max_rss_mb")


@dataclass(frozen=True)
class JobCost:
    rule: str
    wildcards: tuple[str, ...]
    wall_s: float
    cpu_s: float
    max_rss_mb: float
    path: str
    cpu_log: str | None = None  # the log whose usage line gave cpu_s


def read_job_cost(path: str | Path) -> JobCost:
    """One Snakemake benchmark TSV, ``.../logs/benchmarks/<rule>/<wildcard>/.../<last>.tsv`` (its last
    repeat if the rule repeats)."""
    parts = Path(path).parts
    root = next((i for i in range(len(parts) - 1) if parts[i:i + 2] == BENCHMARK_ROOT.parts), None)
    if root is None or len(parts) < root + 4:
        raise ValueError(f"{path}: expected a file under {BENCHMARK_ROOT}/<rule>/")
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows or not {"s", "max_rss", "cpu_time"} <= set(rows[-1]):
        raise ValueError(f"{path}: expected a Snakemake benchmark TSV with columns s, max_rss, cpu_time")
    row = rows[-1]
    wildcards = (*parts[root + 3:-1], Path(parts[-1]).stem)
    log = Path(*parts[:root + 1], *parts[root + 2:-1], Path(parts[-1]).stem + ".log")
    cpu = logged_cpu_seconds(log)
    return JobCost(parts[root + 2], wildcards, float(row["s"]), float(row["cpu_time"]) if cpu is None else cpu,
                   _number(row["max_rss"]), str(path), None if cpu is None else str(log))


def logged_cpu_seconds(log: Path) -> float | None:
    """The exact CPU seconds the job's ``fpa`` command reported as its log's last usage line
    (the process and its finished children), or None without one."""
    from fpa.provenance.record import last_logged_usage

    usage = last_logged_usage(log.read_text(errors="replace")) if log.exists() else None
    return None if usage is None else float(usage["cpu_s"])


def _number(text: str) -> float:
    return float(text) if text not in ("", "-", "NA") else float("nan")


def run_of(cost: JobCost) -> tuple[str, str, str]:
    """(model, method, seed) the job's cost belongs to; (model, SHARED, "") for jobs shared by a model's runs."""
    if cost.rule in RUN_RULES:
        return cost.wildcards[0], cost.wildcards[1], cost.wildcards[2]
    return cost.wildcards[0], SHARED, ""


def select_costs(costs: Iterable[JobCost], *, models: Iterable[str], methods: Iterable[str],
                 seeds: Iterable[int | str]) -> list[JobCost]:
    """The costs of the stages (``STAGES``) of these runs and of their models' shared jobs; other
    experiments sharing the directory (other methods or seeds) are left out."""
    models = set(models)
    runs = {(model, method, str(seed)) for model in models for method in methods for seed in seeds}
    return [cost for cost in costs if cost.rule in STAGES
            and (run_of(cost) in runs or (cost.rule in MODEL_RULES and cost.wildcards[0] in models))]


def cost_by_stage(costs: Iterable[JobCost]) -> pd.DataFrame:
    """Rows (model, method, seed, stage) with the summed wall and CPU seconds and the largest RSS."""
    records = []
    for cost in costs:
        model, method, seed = run_of(cost)
        records.append({"model": model, "method": method, "seed": seed,
                        "stage": STAGES.get(cost.rule, cost.rule), "wall_s": cost.wall_s, "cpu_s": cost.cpu_s,
                        "max_rss_mb": cost.max_rss_mb})
    if not records:
        raise ValueError("no benchmark records to summarise")
    frame = pd.DataFrame.from_records(records)
    table = frame.groupby(["model", "method", "seed", "stage"], sort=True).agg(
        jobs=("wall_s", "size"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum"), max_rss_mb=("max_rss_mb", "max"))
    return table.reset_index()[list(COLUMNS)]


def to_markdown(table: pd.DataFrame, title: str) -> str:
    lines = [f"**{title}** ({CAPTION.replace('benchmark:', '`benchmark:`')})", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + "|".join(["---"] * 4 + ["---:"] * 4) + "|"]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join([*map(markdown_text, (row.model, row.method)), str(row.seed),
                                         markdown_text(row.stage), str(row.jobs),
                                         f"{row.wall_s:.1f}", f"{row.cpu_s:.1f}", f"{row.max_rss_mb:.0f}"]) + " |")
    return "\n".join(lines) + "\n"


def to_html(table: pd.DataFrame, title: str) -> str:
    """The table as a standalone HTML page, for the Snakemake report."""
    body = table.to_html(index=False, float_format=lambda value: f"{value:.1f}", border=0)
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(title)}</title></head>"
            f"<body><p><b>{escape(title)}</b> ({escape(CAPTION)})</p>{body}</body></html>\n")


def stage_totals(table: pd.DataFrame) -> pd.DataFrame:
    """Jobs, wall and CPU seconds per stage over every run, and the largest RSS."""
    return table.groupby("stage").agg(jobs=("jobs", "sum"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum"),
                                      max_rss_mb=("max_rss_mb", "max")).reset_index()
