"""The one command-line interface the Snakemake rules call: ``python -m fpa <command>``.

Each command module registers a subcommand; a command parses its arguments,
calls one library function, and writes its outputs atomically with a provenance
sidecar. Errors a user can fix (bad config, missing file) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

PROCESS_STARTED = time.perf_counter()  # `python -m fpa` imports this module first

from fpa.config import ConfigError  # noqa: E402 (after the clock starts)

# command -> module that registers it; a command imports only its own module (the others pull
# in torch/transformers, ~5 s per job, and envs that don't have them)
COMMANDS = {
    "fetch-data": "data", "prepare-benchmark": "data", "validate-benchmark": "data", "math-train": "data", "fetch-model": "data",
    "gold-selfcheck": "data", "toy-model": "toy", "toy-problems": "toy", "sample": "dataset",
    "build-dataset": "dataset", "step-dpo-dataset": "dataset", "validation-benchmark": "dataset",
    "cache-reference": "reference", "train": "train", "train-online": "train_online", "evaluate": "evaluate", "curve": "curve",
    "select-checkpoint": "select",
    "generate": "generate", "evaluate-code": "code", "code-train": "code", "aggregate": "tables", "reproduction": "tables", "cost": "cost",
    "figure": "figure", "figure-table": "figure", "future-policy": "future_policy", "entanglement": "entanglement",
    "explain": "info", "methods": "info", "check-config": "info", "plan-counts": "plan", "plan-memory": "memory",
    "lock": "lock",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser for ``command`` alone, or for every command (help, unknown command)."""
    parser = argparse.ArgumentParser(prog="fpa", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = [COMMANDS[command]] if command in COMMANDS else dict.fromkeys(COMMANDS.values())
    for name in modules:
        importlib.import_module(f"fpa.cli.{name}").register(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
    args.argv = argv  # the command line, for a command that starts itself again (train's DDP ranks)
    try:
        args.handler(args)
    except (ConfigError, ValueError, FileNotFoundError) as error:
        print(f"fpa {args.command}: error: {error}", file=sys.stderr)
        sys.exit(2)
    finally:
        # a job's log, not a user at a terminal (nor a user's pipe: interactive commands never run as jobs)
        if not sys.stderr.isatty() and not getattr(args, "interactive", False):
            report_usage()


def report_usage() -> None:
    """The command's cost as the last line of its log (``fpa.provenance.record.usage_line``)."""
    from fpa.provenance.record import usage_line

    print(usage_line(PROCESS_STARTED), file=sys.stderr, flush=True)
