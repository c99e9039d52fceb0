"""``fpa figure``: one figure of the paper (PNG and PDF) from the runs the DAG wrote.

The runs are named by ``--config-json``: ``{"model", "roles": {role: method}, "seeds",
"labels": {role: label}, "curve_benchmark"}``; the files read are the DAG's own paths
(``fpa.figures.paths``), each recorded with its sha256 in the figure's sidecar.
"""

from __future__ import annotations

from fpa.cli.common import add_common, setup
from fpa.figures import FIGURES, figure_inputs, input_files
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


def register(commands) -> None:
    parser = commands.add_parser("figure", help="draw one of the paper's figures from the runs")
    add_common(parser)
    parser.add_argument("--name", required=True, help="figure (fpa.figures.FIGURES)")
    parser.add_argument("--out-png", required=True)
    parser.add_argument("--out-pdf", required=True)
    parser.set_defaults(handler=figure)
