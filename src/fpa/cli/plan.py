"""``fpa plan-counts`` and ``fpa config-doc``: the documents generated from the code (docs/paper.md's
section of what each config plans, fpa.planning.counts; config/README.md, fpa.schema_doc)."""

from __future__ import annotations

from pathlib import Path

from fpa.io import write_text
from fpa.planning.counts import counts_section, update_doc
from fpa.project import PROJECT_ROOT
from fpa.schema_doc import render


def plan_counts(args) -> None:
    if args.doc is None:
        print(counts_section())
        return
    changed = update_doc(args.doc)
    print(f"{args.doc}: plan counts {'updated' if changed else 'already current'}")


def config_doc(args) -> None:
    text = render(PROJECT_ROOT)
    if args.write is None:
        print(text, end="")
        return
    changed = not args.write.is_file() or args.write.read_text() != text
    if changed:
        write_text(args.write, text)
    print(f"{args.write}: {'updated' if changed else 'already current'}")


def register(commands) -> None:
    parser = commands.add_parser("plan-counts")
    parser.add_argument("--doc", type=Path, default=None, metavar="FILE",
                        help="rewrite the section between its plan-counts markers in this file (else print it)")
    parser.set_defaults(handler=plan_counts)

    parser = commands.add_parser("config-doc")
    parser.add_argument("--write", type=Path, default=None, metavar="FILE",
                        help="write it to this file, config/README.md (else print it)")
    parser.set_defaults(handler=config_doc)
