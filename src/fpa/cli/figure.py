"""``fpa figure``: one figure of the paper (PNG and PDF) from the runs the DAG wrote.

The runs are named by ``--config-json``: ``{"model", "roles": {role: method}, "seeds",
"labels": {role: label}, "styles": {role: style index}, "curve_benchmark"}``; the files read are the DAG's own paths
(``fpa.paths``), each recorded with its sha256 in the figure's sidecar.
"""

from __future__ import annotations

from fpa.aggregation.escape import markdown_text
from fpa.cli.common import add_common, setup
from fpa.figures import FIGURES
from fpa.figures.inputs import figure_inputs, input_files
from fpa.provenance.record import Job


def figure(args) -> None:
    setup(args)
    if args.name not in FIGURES:
        raise ValueError(f"--name: expected one of {sorted(FIGURES)}, got {args.name!r}")
    inputs = figure_inputs(args.name, args.config_json)
    drawn = FIGURES[args.name].draw(inputs)
    job = Job("figure", {"figure": args.name, **args.config_json}, {path: path for path in input_files(inputs)},
              args.code)
    job.extra["caption"] = FIGURES[args.name].caption
    for path, kind in ((args.out_png, "png"), (args.out_pdf, "pdf")):
        with job.output(path) as tmp:
            drawn.savefig(tmp, format=kind)
    print(f"{args.name}: {args.out_png}, {args.out_pdf}")


def figure_table(args) -> None:
    """The numbers behind a figure (``Figure.table``) as CSV and Markdown, with provenance."""
    setup(args)
    figure = FIGURES.get(args.name)
    if figure is None or figure.table is None:
        raise ValueError(f"--name: expected a figure with a table, one of "
                         f"{sorted(name for name, f in FIGURES.items() if f.table)}, got {args.name!r}")
    inputs = figure_inputs(args.name, args.config_json)
    table = figure.table(inputs)
    job = Job("figure_table", {"figure": args.name, **args.config_json},
              {path: path for path in input_files(inputs)}, args.code)
    with job.output(args.out_csv) as tmp:
        table.to_csv(tmp, index=False, float_format="%.4f")
    with job.output(args.out_md) as tmp:
        tmp.write_text(to_markdown(table, f"{args.name}: {figure.caption}"))
    with job.output(args.out_html) as tmp:
        tmp.write_text(to_html(table, args.name, figure.caption))
    print(table.to_string(index=False))


def to_html(table, name: str, caption: str) -> str:
    """The table as a standalone HTML page, for the Snakemake report (times in hours; empty: never reached)."""
    from html import escape

    body = table.to_html(index=False, float_format=lambda value: f"{value:.3f}", na_rep="", border=0)
    return (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{escape(name)}</title></head>"
            f"<body><p><b>{escape(name)}</b>: {escape(caption)} (times in hours)</p>{body}</body></html>\n")


def to_markdown(table, title: str) -> str:
    """Hours as minutes when every run took under 3 hours (as the figure's axis); empty where never reached."""
    hours = [column for column in table.columns if column.endswith("_h") or column.startswith("h_to_")]
    in_minutes = table["end_h"].max() < 3 if "end_h" in table else False
    unit = "min" if in_minutes else "h"
    headers = [column.replace("_h", "_min").replace("h_to_", "min_to_") if in_minutes and column in hours else column
               for column in table.columns]
    lines = [f"**{title}** (times in {unit})", "", "| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if column in hours or table[column].dtype.kind == "f" else "---"
                            for column in table.columns) + "|"]
    for row in table.itertuples(index=False):
        cells = []
        for column, value in zip(table.columns, row):
            if column in hours:
                cells.append("" if value != value else f"{value * 60:.1f}" if in_minutes else f"{value:.2f}")
            else:
                cells.append(f"{value:.2f}" if isinstance(value, float) else markdown_text(str(value)))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def register(commands) -> None:
    parser = commands.add_parser("figure")
    add_common(parser)
    parser.add_argument("--name", required=True, help="figure (fpa.figures.FIGURES)")
    parser.add_argument("--out-png", required=True)
    parser.add_argument("--out-pdf", required=True)
    parser.set_defaults(handler=figure)

    table = commands.add_parser("figure-table")
    add_common(table)
    table.add_argument("--name", required=True, help="figure with a table (fpa.figures.FIGURES)")
    table.add_argument("--out-csv", required=True)
    table.add_argument("--out-md", required=True)
    table.add_argument("--out-html", required=True)
    table.set_defaults(handler=figure_table)
