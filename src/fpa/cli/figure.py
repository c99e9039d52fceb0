"""``fpa figure``: one figure of the paper (PNG and PDF) from the runs the DAG wrote.

The runs are named by ``--config-json``: ``{"model", "roles": {role: method}, "seeds",
"labels": {role: label}, "curve_benchmark"}``; the files read are the DAG's own paths
(``fpa.figures.data``), each recorded with its sha256 in the figure's sidecar.
"""

from __future__ import annotations

from fpa.cli.common import add_common, setup
from fpa.figures import FIGURES, FigureInputs
from fpa.figures import data as D
from fpa.provenance.record import Job


def figure_inputs(name: str, slice_: dict) -> FigureInputs:
    figure = FIGURES[name]
    model, seeds, roles = slice_["model"], slice_["seeds"], slice_["roles"]
    bench = slice_.get("curve_benchmark")
    curves = {role: [D.curve_path(model, method, s) for s in seeds] for role, method in roles.items()}
    metrics = {role: [D.metrics_path(model, method, s) for s in seeds] for role, method in roles.items()}
    evals = {role: {b: [D.eval_path(model, method, s, b) for s in seeds] for b in slice_["benchmarks"]}
             for role, method in roles.items()}
    return FigureInputs(
        seeds=seeds,
        metrics=metrics if figure.uses_metrics else {},
        curves=curves if figure.uses_curves else {},
        base_curves=[D.base_curve_path(model, s) for s in seeds] if figure.uses_curves and slice_["base"] else [],
        labels={role: slice_["labels"].get(role, method) for role, method in roles.items()},
        curve_benchmark=bench,
        evals=evals if figure.uses_evals else {},
        benchmarks=list(slice_["benchmarks"]),
        lam=dict(slice_["lam"]),
    )


def files_of(inputs: FigureInputs) -> list[str]:
    evals = [paths for per_bench in inputs.evals.values() for paths in per_bench.values()]
    groups = (*inputs.metrics.values(), *inputs.curves.values(), inputs.base_curves, *evals)
    return [path for group in groups for path in group]


def figure(args) -> None:
    setup(args)
    if args.name not in FIGURES:
        raise ValueError(f"--name: expected one of {sorted(FIGURES)}, got {args.name!r}")
    inputs = figure_inputs(args.name, args.config_json)
    drawn = FIGURES[args.name].draw(inputs)
    job = Job("figure", {"figure": args.name, **args.config_json}, {path: path for path in files_of(inputs)},
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
