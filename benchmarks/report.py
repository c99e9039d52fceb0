"""Write the benchmark tables into the Markdown from the committed results files.

    python benchmarks/report.py           # rewrites every marked section in place
    python benchmarks/report.py --check   # rewrites nothing; exit 1 naming each stale section
    python benchmarks/report.py --print trl_step   # prints one results file's Markdown

A section is the text between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->``
in README.md, benchmarks/README.md or a file of docs/. Its content is ``markdown(record)`` of the
record in ``benchmarks/results/NAME.json``, by the benchmark module that wrote it (its
``"benchmark"`` field, else ``benchmarks/NAME.py``; a package such as ``benchmarks/gpu/`` exports
it from its ``__init__``): one run per table, and no number typed by hand. ``bench:NAME.VIEW`` is
a shorter view of the same record, ``markdown_VIEW(record)`` (the README's summary of the default
run: ``bench:default_run.summary``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DOCS = (ROOT / "README.md", BENCH / "README.md", ROOT / "docs" / "toy.md", ROOT / "docs" / "performance.md")
RESULTS = BENCH / "results"
NAME = r"[a-z_0-9]+(?:\.[a-z_]+)?"  # a results file, and optionally a view of it
START = re.compile(rf"<!-- bench:({NAME}):start -->")
SECTION = re.compile(rf"(<!-- bench:(?P<name>{NAME}):start -->\n)(?P<body>.*?)(<!-- bench:(?P=name):end -->)", re.S)


def render(section: str, where: str) -> str:
    """The Markdown of ``results/NAME.json``, by the ``markdown()`` (or, for ``NAME.VIEW``, the
    ``markdown_VIEW()``) of the benchmark that wrote it."""
    name, _, view = section.partition(".")
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"{where}: section bench:{name}: expected a results file {path.relative_to(ROOT)}, "
                         "found none")
    record = json.loads(path.read_text())
    benchmark = record.get("benchmark", name)  # a file named after its benchmark need not say it
    if not ((BENCH / f"{benchmark}.py").is_file() or (BENCH / benchmark / "__init__.py").is_file()):
        raise ValueError(f"{where}: section bench:{name}: expected benchmarks/{benchmark}.py or the package "
                         f"benchmarks/{benchmark}/ (the benchmark that wrote {path.name}), found none")
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the benchmarks import each other as scripts do
    module = importlib.import_module(benchmark)
    function = f"markdown_{view}" if view else "markdown"
    if not hasattr(module, function):
        raise ValueError(f"{where}: section bench:{section}: expected a function {function}() in "
                         f"benchmarks/{benchmark}.py, found none")
    return getattr(module, function)(record).rstrip("\n") + "\n"


def regenerate(text: str, where: str) -> str:
    """``text`` with every marked section's body replaced by its rendering."""
    closed = {match.start() for match in SECTION.finditer(text)}
    for match in START.finditer(text):
        if match.start() not in closed:
            line = text.count("\n", 0, match.start()) + 1
            raise ValueError(f"{where}:{line}: bench:{match[1]}:start has no matching "
                             f"<!-- bench:{match[1]}:end --> after it")
    return SECTION.sub(lambda m: m[1] + render(m["name"], where) + m[4], text)


def stale_sections(old: str, new: str) -> list[str]:
    bodies = {m["name"]: m["body"] for m in SECTION.finditer(new)}
    return [m["name"] for m in SECTION.finditer(old) if bodies.get(m["name"]) != m["body"]]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 if a section is stale")
    parser.add_argument("--print", dest="name", help="print the Markdown of benchmarks/results/NAME.json and exit")
    args = parser.parse_args(argv)
    if args.name:
        print(render(args.name, "--print"), end="")
        return 0
    from fpa.io import write_text

    stale = []
    for doc in DOCS:
        old = doc.read_text()
        new = regenerate(old, str(doc.relative_to(ROOT)))
        if args.check:
            stale += [f"{doc.relative_to(ROOT)}: bench:{name}" for name in stale_sections(old, new)]
        elif new != old:
            write_text(doc, new)
    for entry in stale:
        print(f"stale: {entry} (run python benchmarks/report.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
