"""``fpa plan-counts``: the README's section of what each config plans (fpa.planning.counts)."""

from __future__ import annotations

from pathlib import Path

from fpa.planning.counts import counts_section, update_readme


def plan_counts(args) -> None:
    if args.readme is None:
        print(counts_section())
        return
    changed = update_readme(args.readme)
    print(f"{args.readme}: plan counts {'updated' if changed else 'already current'}")


def register(commands) -> None:
    parser = commands.add_parser("plan-counts", help="jobs, training runs, tables and figures each config/*.yaml "
                                                     "plans (snakemake -n)")
    parser.add_argument("--readme", type=Path, default=None,
                        help="rewrite the section between its plan-counts markers in this file (else print it)")
    parser.set_defaults(handler=plan_counts)
