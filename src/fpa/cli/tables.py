"""``fpa aggregate``: evaluation files → a table's CSV, Markdown, LaTeX, HTML and JSON (every cell,
with the paper's value where the table compares), with provenance; ``fpa reproduction``: the
compared tables' JSON → the reproduction summary."""

from __future__ import annotations

from pathlib import Path

from fpa.aggregation import reproduction
from fpa.aggregation.grid import layout_from_json
from fpa.aggregation.layout import OVERHEAD_COLUMNS
from fpa.aggregation.tables import EvalResult, cells_record, fill, to_csv, to_html, to_latex, to_markdown
from fpa.cli.common import add_common, setup
from fpa.evaluation.metrics import evaluation_metric
from fpa.io import read_json, sha256_file, sha256_path, write_json, write_text
from fpa.paths import CHECKPOINT, EVALUATION, TABLE, parse, shown
from fpa.provenance.record import Job


def read_evaluation(path: str, metrics: dict[str, set[str]]) -> list[EvalResult]:
    """The ``metrics[bench]`` (pass@1, pass@k) of one evaluation file (``fpa.paths.EVALUATION``)."""
    run = parse(EVALUATION, path)
    record, digest = read_json(path), sha256_file(path)
    return [EvalResult(run["model"], run["method"], int(run["seed"]), run["bench"],
                       evaluation_metric(record, metric, path), path, digest, metric)
            for metric in sorted(metrics.get(run["bench"], ()))]


def read_training(path: str, metrics=None) -> list[EvalResult]:
    """A run's training throughput and peak memory (its ``fpa.paths.CHECKPOINT``)."""
    run = parse(CHECKPOINT, path)
    speed = read_json(Path(path) / "training_state.json")["summary"].get("throughput")
    if speed is None:
        raise ValueError(f"{path}/training_state.json: no summary.throughput (trained before it was recorded)")
    digest = sha256_path(path)
    return [EvalResult(run["model"], run["method"], int(run["seed"]), metric, speed[metric], path, digest)
            for metric in OVERHEAD_COLUMNS]


def aggregate(args) -> None:
    setup(args)
    layout = layout_from_json(args.config_json)
    read = read_training if layout.reads == "training" else read_evaluation
    metrics: dict[str, set[str]] = {}
    for key in layout.cell_keys():
        metrics.setdefault(key.bench, set()).add(key.metric)
    results = [result for path in args.evals for result in read(path, metrics)]
    filled = fill(layout, results)
    job = Job("aggregate", args.config_json, {f"eval:{p}": p for p in args.evals}, args.code)
    renderers = {args.out_csv: to_csv, args.out_md: to_markdown, args.out_tex: to_latex, args.out_html: to_html}
    cells = cells_record(layout, filled)
    for path, render in renderers.items():
        with job.output(path, cells=cells) as tmp:
            write_text(tmp, render(layout, filled))
    with job.output(args.out_json) as tmp:
        write_json(tmp, {"name": layout.name, "caption": layout.caption, "paper_label": layout.paper_label,
                         "columns": dict(zip(layout.column_keys, layout.columns)), "cells": cells})
    print(to_markdown(layout, filled))


def summarise_reproduction(args) -> None:
    setup(args)
    rows = [reproduction.summarise(read_json(path)) for path in args.tables]
    job = Job("reproduction", {}, {f"table:{p}": p for p in args.tables}, args.code)
    renderers = {args.out_csv: reproduction.to_csv, args.out_md: reproduction.to_markdown,
                 args.out_html: reproduction.to_html}
    for path, render in renderers.items():
        with job.output(path) as tmp:
            write_text(tmp, render(rows))
    print(reproduction.to_markdown(rows))


def register(commands) -> None:
    parser = commands.add_parser("aggregate")
    add_common(parser)
    parser.add_argument("evals", nargs="+", help=f"{shown(EVALUATION)} files, or the runs' {shown(CHECKPOINT)} "
                        "directories (overhead tables)")
    parser.add_argument("--name", required=True, help="table name")
    parser.add_argument("--out-csv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-tex", required=True)
    parser.add_argument("--out-html", required=True)
    parser.add_argument("--out-json", required=True, help="every cell, with the paper's value where compared")
    parser.set_defaults(handler=aggregate)
    parser = commands.add_parser("reproduction")
    add_common(parser, config=False)
    parser.add_argument("tables", nargs="+", help=f"the compared tables' {shown(TABLE['json'])}")
    parser.add_argument("--out-csv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-html", required=True)
    parser.set_defaults(handler=summarise_reproduction)
