"""The paper's tables: a layout (``fpa.aggregation.layout``) filled with Pass@1 (in %), each cell
``mean ± sample std`` over seeds, rendered as CSV, Markdown, LaTeX and HTML.

Avg. is computed per run (mean over the row's benchmarks) and then summarised over seeds, as
the paper's multi-seed table does. Every cell keeps the evaluation files it averages, with
their sha256, for ``fpa explain``. Within each block the best mean of a column is bold and
the second best underlined, compared as printed (ties share a mark).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace
from html import escape
from typing import Mapping, Sequence

from fpa.aggregation.escape import csv_text, latex_text, markdown_text
from fpa.aggregation.grid import PASS_AT_1, Block, Layout, Row
from fpa.aggregation.paper import compare
from fpa.paths import TABLE

BEST, SECOND = "best", "second"
#: a cell of a run its row's model does not train (the paper prints "-")
NOT_RUN = "-"


@dataclass(frozen=True)
class EvalResult:
    model: str
    method: str
    seed: int
    bench: str
    value: float  # Pass@1 (or pass@k) in [0, 1], or a training metric
    path: str
    sha256: str
    metric: str = PASS_AT_1


@dataclass(frozen=True)
class Cell:
    text: str
    mean: float
    std: float
    sources: list  # per seed: {"seed", "value", "files", "sha256"}
    mark: str | None = None
    comparison: dict | None = None  # with the paper's value (fpa.aggregation.paper.compare)


@dataclass(frozen=True)
class FilledRow:
    row: Row
    cells: tuple[Cell, ...]


def format_cell(values: Sequence[float], scale: float = 100) -> str:
    """``mean ± sample std`` of ``values`` × ``scale`` (100: Pass@1 in %)."""
    mean = scale * statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.2f}"
    return f"{mean:.2f} ± {scale * statistics.stdev(values):.2f}"


def _fill_cell(keys, seed: int | None, by_key: Mapping, scale: float) -> Cell:
    """A cell over its run's seeds (``keys`` share one run), or over one ``seed`` (a per-seed row);
    no keys: a cell of a run this row's model does not train, printed "-" as the paper does."""
    if not keys:
        return Cell(NOT_RUN, math.nan, math.nan, [])
    seeds = keys[0].seeds if seed is None else (seed,)
    sources = []
    for seed in seeds:
        missing = [k for k in keys if (k.model, k.method, seed, k.bench, k.metric) not in by_key]
        if missing:
            k = missing[0]
            raise ValueError(f"no evaluation of model {k.model!r}, method {k.method!r}, seed {seed}, "
                             f"benchmark {k.bench!r} ({k.metric}) among the table's inputs")
        parts = [by_key[(k.model, k.method, seed, k.bench, k.metric)] for k in keys]
        sources.append({"seed": seed, "value": statistics.fmean(p.value for p in parts),
                        "files": [p.path for p in parts], "sha256": {p.path: p.sha256 for p in parts}})
    values = [s["value"] for s in sources]
    return Cell(format_cell(values, scale), statistics.fmean(values),
                statistics.stdev(values) if len(values) > 1 else math.nan, sources)


def _marks(rows: list[FilledRow], column: int) -> dict[int, str]:
    """Row index -> best / second for one column of a block, on the printed means (ties share)."""
    printed = {i: round(100 * r.cells[column].mean, 2) for i, r in enumerate(rows)
               if r.row.seed is None and r.row.ratio_to is None and not math.isnan(r.cells[column].mean)}
    ranked = sorted(set(printed.values()), reverse=True)
    if len(printed) < 2:
        return {}
    marks = {i: BEST for i, v in printed.items() if v == ranked[0]}
    if len(ranked) > 1:
        marks.update({i: SECOND for i, v in printed.items() if v == ranked[1]})
    return marks


def fill(layout: Layout, results: Sequence[EvalResult]) -> list[tuple[Block, list[FilledRow]]]:
    """Every cell of ``layout`` from ``results``; a missing evaluation is a ValueError naming it."""
    by_key = {(r.model, r.method, r.seed, r.bench, r.metric): r for r in results}
    scale = _scale(layout)
    filled = []
    for block in layout.blocks:
        rows = [FilledRow(row, tuple(_fill_cell(keys, row.seed, by_key, scale) for keys in row.cells))
                for row in block.rows]
        rows = [_with_paper(layout, r, scale) for r in rows]
        rows = [_ratio(r, rows) if r.row.ratio_to else r for r in rows]
        if layout.mark_best:
            for column in range(len(layout.columns)):
                for index, mark in _marks(rows, column).items():
                    cells = list(rows[index].cells)
                    cells[column] = replace(cells[column], mark=mark)
                    rows[index] = FilledRow(rows[index].row, tuple(cells))
        filled.append((block, rows))
    return filled


def _scale(layout: Layout) -> float:
    """Printed units per stored unit: Pass@1 in %, training metrics as recorded."""
    return 100 if layout.reads == "evaluations" else 1


def _with_paper(layout: Layout, row: FilledRow, scale: float) -> FilledRow:
    """``row`` with each cell the paper prints compared with the paper's value."""
    paper = {(p.row, p.column): p for p in layout.paper if p.row == row.row.key}
    if not paper:
        return row
    cells = tuple(replace(c, comparison=compare(scale * c.mean, scale * c.std, len(c.sources), paper[key]))
                  if (key := (row.row.key, column)) in paper else c
                  for c, column in zip(row.cells, layout.column_keys))
    return FilledRow(row.row, cells)


def format_delta(delta: float) -> str:
    """``Δ`` with a true minus sign and two decimals, as the cells print."""
    return f"{round(delta, 2) + 0.0:+.2f}".replace("-", "−")  # + 0.0: float noise prints no "−0.00"


def _shown(c: Cell) -> str:
    """A cell's text, with the paper's value and Δ beside it where the paper prints the cell."""
    if c.comparison is None:
        return c.text
    return f"{c.text} (paper {c.comparison['paper_text']}, Δ {format_delta(c.comparison['delta'])})"


def _ratio(row: FilledRow, rows: list[FilledRow]) -> FilledRow:
    """A ratio row: each cell's mean over the same column's mean in row ``ratio_to``."""
    base = next(r for r in rows if r.row.key == row.row.ratio_to)
    cells = tuple(Cell(f"{c.mean / b.mean:.3f}×", c.mean / b.mean, math.nan, c.sources + b.sources)
                  for c, b in zip(row.cells, base.cells))
    return FilledRow(row.row, cells)


def cells_record(layout: Layout, filled) -> dict:
    """row key -> column key -> {text, mean, std, sources, the row's label and the column's header as
    printed, the scale from a source's value to the printed unit}: the sidecar's map for ``fpa explain``
    (keyed by column key, as two columns may print one header)."""
    scale = _scale(layout)
    return {r.row.key: {key: {"key": key, "header": column, "text": c.text, "mean": c.mean, "std": c.std,
                              "sources": c.sources, "label": _label(r.row), "scale": scale,
                              **({"paper": c.comparison} if c.comparison else {})}
                        for column, key, c in zip(layout.columns, layout.column_keys or layout.columns, r.cells)}
            for _, rows in filled for r in rows}


def cell_unit(layout: Layout) -> str:
    """What the cells are: the unit, over which seeds, and what sits beside them."""
    unit = "Pass@1 %" if layout.reads == "evaluations" else "training throughput and peak memory per process"
    seeds = {key.seeds for key in layout.cell_keys()}
    if all(len(s) == 1 for s in seeds):
        unit += f", seed {', '.join(str(s) for s in sorted({s for (s,) in seeds}))}"
    else:
        unit += ", mean ± sample std over seeds"
    if layout.paper:
        unit += f"; beside a cell: the paper's value ({layout.paper_label}) and Δ = ours − paper"
    return unit


def report_caption(layout: Layout, name: str) -> str:
    """The report's caption of table ``name``: what its cells are (true for its kind: the unit, over
    which seeds, the paper's values only where it shows them), its columns, and how to trace a cell."""
    columns = ", ".join(layout.columns)
    return (f"Table **{name}**: {cell_unit(layout)}. Columns: {columns.rstrip('.')}{'.' if columns else ''} "
            f"``fpa explain {TABLE['csv'].format(table=name)} --row ROW --col COLUMN`` lists the files behind a cell.")


def _label(row: Row) -> str:
    return row.label + (" †" if row.dagger else "")


def _csv_cells(c: Cell) -> tuple[str, str, str]:
    """A cell's text, the paper's value and Δ (empty where the paper prints none)."""
    if c.comparison is None:
        return c.text, "", ""
    return c.text, c.comparison["paper_text"], f"{round(c.comparison['delta'], 2) + 0.0:.2f}"


def to_csv(layout: Layout, filled) -> str:
    """A row per table row; with the paper's values, ``<col>_paper`` and ``<col>_delta`` after each column."""
    import csv
    import io

    suffixes = ("", "_paper", "_delta") if layout.paper else ("",)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["block", "row", *map(csv_text, [layout.corner, *(f"{c}{s}" for c in layout.columns
                                                                        for s in suffixes)])])
    for block, rows in filled:
        writer.writerows([csv_text(block.title or ""), r.row.key, csv_text(_label(r.row)),
                          *(v for c in r.cells for v in _csv_cells(c)[:len(suffixes)])] for r in rows)
    return out.getvalue()


def to_markdown(layout: Layout, filled) -> str:
    def cell(c: Cell) -> str:
        beside = _shown(c)[len(c.text):]
        return {BEST: f"**{c.text}**", SECOND: f"<u>{c.text}</u>"}.get(c.mark, c.text) + \
            (f" {markdown_text(beside)}" if beside else "")

    lines = [f"**{markdown_text(layout.caption)}** ({cell_unit(layout)})", "",
             "| " + " | ".join(map(markdown_text, [layout.corner, *layout.columns])) + " |",
             "|" + "|".join(["---"] + [":---:"] * len(layout.columns)) + "|"]
    for block, rows in filled:
        if block.title:
            lines.append(f"| *{markdown_text(block.title)}* |" + " |" * len(layout.columns))
        for r in rows:
            label = markdown_text(_label(r.row))
            label = ("&emsp;" if r.row.indent else "") + (f"**{label}**" if r.row.highlight else label)
            lines.append("| " + " | ".join([label, *map(cell, r.cells)]) + " |")
    return "\n".join(lines) + "\n"


def to_latex(layout: Layout, filled) -> str:
    """A ``table`` environment; needs ``booktabs`` and ``colortbl`` (highlighted rows)."""
    n = len(layout.columns) + 1

    def cell(c: Cell) -> str:
        text = latex_text(c.text)
        beside = _shown(c)[len(c.text):]
        beside = rf" {{\footnotesize {latex_text(beside.strip())}}}" if beside else ""
        return {BEST: rf"\textbf{{{text}}}", SECOND: rf"\underline{{{text}}}"}.get(c.mark, text) + beside

    lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{latex_text(layout.caption)} "
             rf"({latex_text(cell_unit(layout))})}}",
             rf"\begin{{tabular}}{{l{'c' * (n - 1)}}}", r"\toprule",
             " & ".join(rf"\textbf{{{latex_text(c)}}}" for c in [layout.corner, *layout.columns]) + r" \\",
             r"\midrule"]
    for index, (block, rows) in enumerate(filled):
        if index:
            lines.append(r"\midrule")
        if block.title:
            lines.append(rf"\multicolumn{{{n}}}{{@{{}}l}}{{\textit{{{latex_text(block.title)}}}}} \\")
        for r in rows:
            label = latex_text(_label(r.row))
            label = (r"\hspace{0.5em}" if r.row.indent else "") + (rf"\textbf{{{label}}}" if r.row.highlight else label)
            lines.append((r"\rowcolor[gray]{0.92} " if r.row.highlight else "")
                         + " & ".join([label, *map(cell, r.cells)]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_html(layout: Layout, filled) -> str:
    """A standalone HTML table with its caption (the Snakemake report shows it as is)."""
    def cell(c: Cell) -> str:
        text = escape(c.text)
        beside = escape(_shown(c)[len(c.text):])
        return "<td>" + {BEST: f"<b>{text}</b>", SECOND: f"<u>{text}</u>"}.get(c.mark, text) + beside + "</td>"

    n = len(layout.columns) + 1
    body = []
    for block, rows in filled:
        if block.title:
            body.append(f'<tr class="head"><td colspan="{n}"><i>{escape(block.title)}</i></td></tr>')
        for r in rows:
            label = escape(_label(r.row))
            classes = " ".join(name for name, on in (("hl", r.row.highlight), ("indent", r.row.indent)) if on)
            body.append(f'<tr class="{classes}"><td>{f"<b>{label}</b>" if r.row.highlight else label}</td>'
                        + "".join(map(cell, r.cells)) + "</tr>")
    head = "".join(f"<th>{escape(c)}</th>" for c in [layout.corner, *layout.columns])
    style = ("table{border-collapse:collapse;font-family:sans-serif}th,td{padding:4px 10px;"
             "border-bottom:1px solid #ccc;text-align:center}td:first-child{text-align:left}"
             "tr.hl{background:#ebebeb}tr.indent td:first-child{padding-left:1.6em}tr.head td{text-align:left}")
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(layout.caption)}</title>"
            f"<style>{style}</style></head><body><table><caption><b>{escape(layout.caption)}</b> "
            f"({escape(cell_unit(layout))})</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>"
            "</body></html>\n")
