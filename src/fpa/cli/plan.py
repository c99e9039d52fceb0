"""``fpa plan-counts``: docs/paper.md's section of what each config plans (fpa.planning.counts)."""

from __future__ import annotations

from pathlib import Path

from fpa.planning.counts import counts_section, update_doc


def plan_counts(args) -> None:
    if args.doc is None:
        print(counts_section())
        return
    changed = update_doc(args.doc)
    print(f"{args.doc}: plan counts {'updated' if changed else 'already current'}")


def register(commands) -> None:
    parser = commands.add_parser("plan-counts", help="jobs, training runs, tables and figures each config/*.yaml "
                                                     "plans (snakemake -n)")
    parser.add_argument("--doc", type=Path, default=None, metavar="FILE",
                        help="rewrite the section between its plan-counts markers in this file (else print it)")
    parser.set_defaults(handler=plan_counts)
