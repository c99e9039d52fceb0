"""The one command-line interface the Snakemake rules call: ``python -m fpa <command>``.

Each command module registers a subcommand; a command parses its arguments,
calls one library function, and writes its outputs atomically with a provenance
sidecar. Errors a user can fix (bad config, missing file) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from fpa.config import ConfigError

COMMAND_MODULES = ("data", "toy", "dataset", "reference", "train", "evaluate", "generate", "code", "tables", "info")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fpa", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"fpa.cli.{name}").register(commands)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except (ConfigError, ValueError, FileNotFoundError) as error:
        print(f"fpa {args.command}: error: {error}", file=sys.stderr)
        sys.exit(2)
