"""``fpa plan-memory CONFIG``: each GPU job's memory per GPU against the GPUs it requests."""

from __future__ import annotations

from pathlib import Path

from fpa.config import expand_runs
from fpa.planning.validation import load_config_file
from fpa.memory.plan import GIB, format_plan, parallel_variants, plan_memory, to_json


def plan_memory_command(args) -> None:
    config = load_config_file(args.config)
    runs = expand_runs(config, where=args.config)
    gpu_gb = args.gpu_memory_gb or config["gpu_memory_gb"]
    estimates = plan_memory(config, runs, int(gpu_gb * GIB), Path(args.root))
    if not estimates:
        raise ValueError(f"{args.config}: no model with a known architecture (a fetched config.json or "
                         f"models.<name>.architecture)")
    if args.json:
        print(to_json(estimates))
        return
    print(format_plan(estimates, int(gpu_gb * GIB), parallel_variants(config, runs, Path(args.root))))


def register(commands) -> None:
    parser = commands.add_parser("plan-memory")
    parser.add_argument("config", help="the config file (YAML), e.g. config/paper.yaml")
    parser.add_argument("--gpu-memory-gb", type=float, help="memory of one GPU (default: the config's gpu_memory_gb)")
    parser.add_argument("--root", default=".", help="the workflow directory (fetched models' config.json)")
    parser.add_argument("--json", action="store_true", help="every estimate with its components, as JSON")
    parser.set_defaults(handler=plan_memory_command)
