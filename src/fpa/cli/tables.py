"""``fpa aggregate``: evaluation files → CSV, Markdown and LaTeX tables with provenance."""

from __future__ import annotations

from pathlib import Path

from fpa.aggregation.tables import EvalResult, summarise, to_html, to_latex, to_markdown
from fpa.cli.common import add_common, setup
from fpa.io import read_json, sha256_file, write_text
from fpa.provenance.record import Job


def parse_eval_path(path: str) -> tuple[str, str, int, str]:
    """``results/eval/{model}/{method}/{seed}/{bench}.json`` → (model, method, seed, bench)."""
    parts = Path(path).parts
    if len(parts) < 4 or not parts[-2].isdigit() or not path.endswith(".json"):
        raise ValueError(f"{path}: expected .../eval/<model>/<method>/<seed>/<bench>.json")
    return parts[-4], parts[-3], int(parts[-2]), Path(path).stem


def aggregate(args) -> None:
    setup(args)
    results = []
    for path in args.evals:
        model, method, seed, bench = parse_eval_path(path)
        value = read_json(path)["pass_at_1"]
        results.append(EvalResult(model, method, seed, bench, value, path, sha256_file(path)))
    cfg = args.config_json
    table, cells = summarise(results, benchmarks=cfg["benchmarks"], methods=cfg["methods"], models=cfg["models"],
                             labels=cfg.get("labels"))
    job = Job("aggregate", cfg, {f"eval:{p}": p for p in args.evals}, args.code)
    outputs = {args.out_csv: table.to_csv(), args.out_md: to_markdown(table, args.name),
               args.out_tex: to_latex(table, args.name), args.out_html: to_html(table, args.name)}
    for path, text in outputs.items():
        with job.output(path, cells=cells) as tmp:
            write_text(tmp, text)
    print(to_markdown(table, args.name))


def register(commands) -> None:
    parser = commands.add_parser("aggregate", help="tables of mean ± std over seeds")
    add_common(parser)
    parser.add_argument("evals", nargs="+", help="results/eval/<model>/<method>/<seed>/<bench>.json files")
    parser.add_argument("--name", required=True, help="table name (title)")
    parser.add_argument("--out-csv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-tex", required=True)
    parser.add_argument("--out-html", required=True)
    parser.set_defaults(handler=aggregate)
