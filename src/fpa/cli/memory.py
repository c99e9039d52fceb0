"""``fpa plan-memory CONFIG``: the cost of a config before it runs: each GPU job's memory per GPU
against the GPUs it requests, then each job family's disk and GPU-hours with their assumptions."""

from __future__ import annotations

import math
from pathlib import Path

from fpa.memory.cost import Assumptions, format_costs, plan_costs, train_problems
from fpa.memory.plan import GIB, format_plan, parallel_variants, plan_memory, to_json
from fpa.planning import judge


def plan_memory_command(args) -> None:
    plan = judge([args.config])
    config, runs = plan.config, plan.runs
    assume = Assumptions.calibrated(**{field: getattr(args, field) for field in ASSUMPTION_FIELDS
                                       if getattr(args, field) is not None})
    gpu_gb = config["gpu_memory_gb"] if args.gpu_memory_gb is None else args.gpu_memory_gb
    if not 0 < gpu_gb < math.inf:  # the config's is bounded by the schema
        raise ValueError(f"--gpu-memory-gb: expected a finite number > 0, got {gpu_gb!r}")
    estimates = plan_memory(config, runs, int(gpu_gb * GIB), Path(args.root))
    if not estimates:
        raise ValueError(f"{args.config}: no model with a known architecture (a fetched config.json or "
                         f"models.<name>.architecture)")
    if args.json:
        print(to_json(estimates))
        return
    print(format_plan(estimates, int(gpu_gb * GIB), parallel_variants(config, runs, Path(args.root))))
    print()
    if train_problems(config, assume) is None:
        print(f"Disk and GPU-hours: the problem count of dataset.source {config['dataset']['source']!r} is not "
              f"known here; pass --train-problems N")
        return
    costs = plan_costs(config, runs, Path(args.root), assume, catalog=plan.catalog, curves=plan.curves())
    print(format_costs(costs, assume, config["budget"]["disk_gb"]))


ASSUMPTION_FIELDS = ("peak_tflops", "train_hfu", "forward_mfu", "generation_mfu", "sequence_fill", "completion_fill",
                     "train_problems", "engine_start_s")


def register(commands) -> None:
    parser = commands.add_parser("plan-memory")
    parser.add_argument("config", help="the config file (YAML), e.g. config/paper.yaml")
    parser.add_argument("--gpu-memory-gb", type=float, help="memory of one GPU (default: the config's gpu_memory_gb)")
    parser.add_argument("--root", default=".", help="the workflow directory (fetched models' config.json)")
    parser.add_argument("--json", action="store_true", help="every estimate with its components, as JSON")
    for field in ASSUMPTION_FIELDS:
        parser.add_argument(f"--{field.replace('_', '-')}", type=int if field == "train_problems" else float,
                            help=f"GPU-hours assumption (default {getattr(Assumptions(), field)}"
                            + ("; measured where benchmarks/gpu/results/gpu.json has users_step)" if field == "train_hfu"
                               else ")"))
    parser.set_defaults(handler=plan_memory_command)
