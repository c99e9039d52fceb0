"""``fpa cost``: the cost-by-stage table of a config's runs, from the jobs' Snakemake benchmark
records under ``logs/benchmarks/`` and the CPU time each job logged (``fpa.aggregation.cost``)."""

from __future__ import annotations

from fpa.cli.common import add_common, setup
from fpa.io import write_text
from fpa.provenance.record import Job


def cost(args) -> None:
    from fpa.aggregation.cost import BENCHMARK_ROOT, cost_by_stage, read_job_cost, select_costs, to_html, to_markdown

    setup(args)
    cfg = args.config_json
    costs = select_costs((read_job_cost(path) for path in sorted(BENCHMARK_ROOT.rglob("*.tsv"))),
                         models=cfg["models"], methods=cfg["methods"], seeds=cfg["seeds"])
    if not costs:
        raise ValueError(f"{BENCHMARK_ROOT}: no benchmark record of the config's runs")
    table = cost_by_stage(costs)
    records = {f"benchmark:{cost.path}": cost.path for cost in costs}
    logs = {f"log:{cost.cpu_log}": cost.cpu_log for cost in costs if cost.cpu_log}
    job = Job("cost", cfg, {**records, **logs}, args.code)
    title = "Cost by stage"
    outputs = {args.out_csv: table.to_csv(index=False), args.out_md: to_markdown(table, title),
               args.out_html: to_html(table, title)}
    for path, text in outputs.items():
        with job.output(path) as tmp:
            write_text(tmp, text)
    print(outputs[args.out_md])


def register(commands) -> None:
    parser = commands.add_parser("cost")
    add_common(parser)
    parser.add_argument("--out-csv", required=True)
    parser.add_argument("--out-md", required=True)
    parser.add_argument("--out-html", required=True)
    parser.set_defaults(handler=cost)
