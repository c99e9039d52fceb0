"""``fpa explain``, ``fpa methods`` and ``fpa check-config``: read-only commands."""

from __future__ import annotations

import sys

from fpa.config import ConfigError, expand_runs
from fpa.objectives import OBJECTIVES
from fpa.planning import load_config_file
from fpa.provenance.explain import explain_cell


def explain(args) -> None:
    result = explain_cell(args.table, args.row, args.col)
    print("\n".join(result.lines))
    if result.problems:
        print(f"\n{len(result.problems)} problem(s):", *result.problems, sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print(f"\nall {len(result.verified)} files verified (sha256 matches the records)")


def methods(args) -> None:
    from fpa.online import ONLINE_METHODS

    for name, objective in OBJECTIVES.items():
        print(f"{name:12s} {objective.summary}")
    for name, method in ONLINE_METHODS.items():
        print(f"{name:12s} (online) {method.summary}")


def check_config(args) -> None:
    """Each file on its own (a config is a whole experiment): one line each, exit 2 if any is refused."""
    refused = 0
    for path in args.configs:
        try:
            config = load_config_file(path)
        except ConfigError as error:
            print(f"fpa check-config: error: {error}", file=sys.stderr)
            refused += 1
            continue
        runs = expand_runs(config, where=path)
        print(f"{path}: ok ({len(runs)} runs x {len(config['seeds'])} seeds x {len(config['benchmarks'])} benchmarks)")
    if refused:
        sys.exit(2)


def register(commands) -> None:
    parser = commands.add_parser("explain")
    parser.add_argument("table", help="results/tables/<table>.csv (or .md/.tex)")
    parser.add_argument("--row", required=True, help="method (row label)")
    parser.add_argument("--col", required=True, help="benchmark (column) or Avg.")
    parser.set_defaults(handler=explain, interactive=True)

    parser = commands.add_parser("methods")
    parser.set_defaults(handler=methods, interactive=True)

    parser = commands.add_parser("check-config")
    parser.add_argument("configs", nargs="+", metavar="config", help="config files (YAML), each checked on its own")
    parser.set_defaults(handler=check_config, interactive=True)
