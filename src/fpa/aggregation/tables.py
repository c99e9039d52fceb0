"""The paper's tables: one row per method, one column per benchmark + Avg., each cell
``mean ± sample std`` of Pass@1 (in %) over seeds.

Avg. is computed per run (mean over the table's benchmarks) and then summarised over
seeds, as the paper's multi-seed table does. Every cell keeps the list of evaluation
files it averages, with their sha256, for ``fpa explain``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

import pandas as pd

AVG = "Avg."


@dataclass(frozen=True)
class EvalResult:
    model: str
    method: str
    seed: int
    bench: str
    value: float  # Pass@1 in [0, 1]
    path: str
    sha256: str


def format_cell(values: Sequence[float]) -> str:
    mean = 100 * statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.2f}"
    return f"{mean:.2f} ± {100 * statistics.stdev(values):.2f}"


def row_label(model: str, method: str, models: Sequence[str]) -> str:
    return method if len(models) == 1 else f"{model}/{method}"


def summarise(results: Sequence[EvalResult], *, benchmarks: Sequence[str], methods: Sequence[str],
              models: Sequence[str], labels: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Return (table of cell strings indexed by row label, cells provenance map).

    ``labels`` maps a benchmark to its column header (config ``benchmarks.<b>.label``,
    e.g. ``MBPP+``, which a benchmark name cannot contain); cells are keyed by header.
    """
    labels = {bench: (labels or {}).get(bench) or bench for bench in benchmarks}
    by_key = {(r.model, r.method, r.seed, r.bench): r for r in results}
    seeds = sorted({r.seed for r in results})
    rows, cells = {}, {}
    for model in models:
        for method in methods:
            label = row_label(model, method, models)
            row, row_cells = {}, {}
            for bench in [*benchmarks, AVG]:
                sources = []
                for seed in seeds:
                    if bench == AVG:
                        parts = [by_key[(model, method, seed, b)] for b in benchmarks]
                        value = statistics.fmean(p.value for p in parts)
                    else:
                        parts = [by_key[(model, method, seed, bench)]]
                        value = parts[0].value
                    sources.append({"seed": seed, "value": value, "files": [p.path for p in parts],
                                    "sha256": {p.path: p.sha256 for p in parts}})
                values = [s["value"] for s in sources]
                column = labels.get(bench, bench)
                row[column] = format_cell(values)
                row_cells[column] = {"text": row[column], "mean": statistics.fmean(values),
                                    "std": statistics.stdev(values) if len(values) > 1 else math.nan,
                                    "sources": sources}
            rows[label], cells[label] = row, row_cells
    table = pd.DataFrame.from_dict(rows, orient="index", columns=[*(labels[b] for b in benchmarks), AVG])
    table.index.name = "method"
    return table, cells


def to_markdown(table: pd.DataFrame, title: str) -> str:
    header = "| " + " | ".join([table.index.name, *table.columns]) + " |"
    rule = "|" + "|".join(["---"] + [":---:"] * len(table.columns)) + "|"
    lines = [f"**{title}** (Pass@1 %, mean ± sample std over seeds)", "", header, rule]
    lines += ["| " + " | ".join([str(label), *row]) + " |" for label, row in table.iterrows()]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return text.replace("_", r"\_").replace("%", r"\%").replace("±", r"$\pm$")


def to_latex(table: pd.DataFrame, title: str) -> str:
    columns = "l" + "c" * len(table.columns)
    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{_latex_escape(title)} (Pass@1 \%, mean $\pm$ std)}}",
             rf"\begin{{tabular}}{{{columns}}}", r"\toprule",
             " & ".join([r"\textbf{Method}", *(rf"\textbf{{{_latex_escape(c)}}}" for c in table.columns)]) + r" \\",
             r"\midrule"]
    lines += [" & ".join([_latex_escape(str(label)), *map(_latex_escape, row)]) + r" \\" for label, row in table.iterrows()]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_html(table: pd.DataFrame, title: str) -> str:
    """A standalone HTML table with its caption (the Snakemake report shows it as is)."""
    from html import escape

    head = "".join(f"<th>{escape(str(c))}</th>" for c in [table.index.name, *table.columns])
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in [label, *row]) + "</tr>"
                   for label, row in table.iterrows())
    style = ("table{border-collapse:collapse;font-family:sans-serif}th,td{padding:4px 10px;"
             "border-bottom:1px solid #ccc;text-align:center}td:first-child{text-align:left}")
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
            f"<style>{style}</style></head><body><table><caption><b>{escape(title)}</b> (Pass@1 %, mean ± "
            f"sample std over seeds)</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
            "</body></html>\n")
