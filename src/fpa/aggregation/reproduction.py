"""The ``reproduction`` table: per table compared with the paper, how many of its cells the
paper prints, how many of those lie within the run's own seed spread of the paper's value, how
many single-seed cells equal it to the paper's rounding, and how many do neither
(``fpa.aggregation.paper.compare`` decides each cell). Read from the tables' JSON records."""

from __future__ import annotations

import csv
import io
from html import escape
from typing import Mapping, Sequence

from fpa.aggregation.escape import markdown_text
from fpa.aggregation.paper import ROUNDING, SPREAD

HEADERS = {"table": "Table", "paper_label": "Paper table", "compared": "Cells compared",
           "within_spread": "Within seed spread", "exact": "Equal to rounding (one seed)", "outside": "Outside",
           "largest_delta": "Largest abs. Δ"}


def summarise(record: Mapping) -> dict:
    """One table's counts from its JSON record (``fpa aggregate``)."""
    compared = [cell["paper"] for row in record["cells"].values() for cell in row.values() if "paper" in cell]
    spread = [c for c in compared if c["basis"] == SPREAD]
    rounding = [c for c in compared if c["basis"] == ROUNDING]
    return {"table": record["name"], "paper_label": record["paper_label"], "compared": len(compared),
            "within_spread": f"{sum(c['within'] for c in spread)} / {len(spread)}" if spread else "no spread",
            "exact": f"{sum(c['within'] for c in rounding)} / {len(rounding)}" if rounding else "n/a",
            "outside": sum(not c["within"] for c in compared),
            "largest_delta": f"{max(abs(c['delta']) for c in compared):.2f}" if compared else ""}


def to_csv(rows: Sequence[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(HEADERS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


CAPTION = ("Reproduction: cells the paper prints, compared with this run (within: |Δ| ≤ the run's sample "
           "std over seeds + the paper's rounding; with one seed, |Δ| ≤ the paper's rounding)")


def to_markdown(rows: Sequence[dict]) -> str:
    lines = [f"**{CAPTION}**", "", "| " + " | ".join(HEADERS.values()) + " |",
             "|" + "|".join(["---"] + [":---:"] * (len(HEADERS) - 1)) + "|"]
    lines += ["| " + " | ".join(markdown_text(str(row[key])) for key in HEADERS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def to_html(rows: Sequence[dict]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADERS.values())
    body = "".join("<tr>" + "".join(f"<td>{escape(str(row[key]))}</td>" for key in HEADERS) + "</tr>"
                   for row in rows)
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Reproduction</title></head><body>"
            f"<table><caption>{escape(CAPTION)}</caption><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
            "</table></body></html>\n")
