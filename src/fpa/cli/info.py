"""``fpa explain``, ``fpa methods`` and ``fpa check-config``: read-only commands."""

from __future__ import annotations

import dataclasses
import sys

from fpa.errors import ConfigError
from fpa.objectives import OBJECTIVES
from fpa.planning import judge
from fpa.provenance.explain import TABLE_FILES, explain_cell


def explain(args) -> None:
    result = explain_cell(args.table, args.row, args.col, whole=args.whole)
    print("\n".join(result.lines))
    if result.notes:
        print(f"\nnote: {len(result.notes)} problem(s) of the table's other cells, not behind this one:",
              *result.notes, sep="\n  ")
    if result.problems:
        print(f"\n{len(result.problems)} problem(s):", *result.problems, sep="\n  ", file=sys.stderr)
        sys.exit(1)
    print(f"\nall {len(result.verified)} files verified (sha256 matches the records)")


def methods(args) -> None:
    from fpa.online import ONLINE_METHODS

    for name, objective in OBJECTIVES.items():
        print(f"{name:12s} {objective.summary}\n{'':12s} defaults: {_defaults(objective.params_type())}")
    for name, method in ONLINE_METHODS.items():
        print(f"{name:12s} (online) {method.summary}\n{'':12s} defaults: {_defaults(method.parse_params(None, name))}")


def _defaults(params: object) -> str:
    """A params dataclass as ``key=value, ...`` (its defaults are the paper's)."""
    values = dataclasses.asdict(params)
    return ", ".join(f"{key}={value}" for key, value in values.items()) or "(none)"


def check_config(args) -> None:
    """Each file on its own (a config is a whole experiment), judged as planning judges it
    (``fpa.planning.judge``): one line each, exit 2 if any is refused."""
    refused = 0
    for path in args.configs:
        try:
            plan = judge([path])
        except ConfigError as error:
            print(f"fpa check-config: error: {error}", file=sys.stderr)
            refused += 1
            continue
        print(f"{path}: ok ({len(plan.runs)} runs x {len(plan.seeds)} seeds x {len(plan.config['benchmarks'])} "
              "benchmarks)")
    if refused:
        sys.exit(2)


def register(commands) -> None:
    parser = commands.add_parser("explain")
    parser.add_argument("table", help=TABLE_FILES)
    parser.add_argument("--row", required=True,
                        help="the row as the table prints it (e.g. FPA, Base), or its run key (fpa); model/run when "
                             "the table has several models, run@seed for a per-seed row")
    parser.add_argument("--col", required=True, help="the column as the table prints it (e.g. toy8, Avg.)")
    parser.add_argument("--whole", action="store_true", help="print every config and recorded value whole "
                                                             "(else cut at 160 characters)")
    parser.set_defaults(handler=explain)

    parser = commands.add_parser("methods")
    parser.set_defaults(handler=methods)

    parser = commands.add_parser("check-config")
    parser.add_argument("configs", nargs="+", metavar="config", help="config files (YAML), each checked on its own")
    parser.set_defaults(handler=check_config)
