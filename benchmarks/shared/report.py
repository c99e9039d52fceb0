"""Write the benchmark tables into the Markdown from the committed results files.

    python benchmarks/shared/report.py           # rewrites every marked section in place
    python benchmarks/shared/report.py --check   # rewrites nothing; exit 1 naming each stale section
    python benchmarks/shared/report.py --print trl_step   # prints one results file's Markdown

A section is the text between ``<!-- bench:NAME:start -->`` and ``<!-- bench:NAME:end -->``
in one of ``DOCS``: README.md, the benchmarks' index and folder READMEs, and docs/toy.md, which quotes
living records (an archived record's tables are copied as they stood, naming the record and its commit:
docs/archive/benchmarks.md, docs/code_eval.md). Its content is ``markdown(record)`` of the record
``benchmarks/FOLDER/results/NAME.json`` (NAME is unique across the folders), by the benchmark module
that wrote it: its ``"benchmark"`` field, else NAME, is ``benchmarks/FOLDER/BENCHMARK.py``, or the folder
itself where it is a package named so (``benchmarks/gpu/`` exports ``markdown`` from its ``__init__``):
one run per table, and no number typed by hand. ``bench:NAME.VIEW`` is a shorter view of the same record,
``markdown_VIEW(record)`` (the README's summary of the default run: ``bench:default_run_intel.summary``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
DOCS = (ROOT / "README.md", BENCH / "README.md", *sorted(BENCH.glob("*/README.md")), ROOT / "docs" / "toy.md")
NAME = r"[a-z_0-9]+(?:\.[a-z_]+)?"  # a results file, and optionally a view of it
START = re.compile(rf"<!-- bench:({NAME}):start -->")
SECTION = re.compile(rf"(<!-- bench:(?P<name>{NAME}):start -->\n)(?P<body>.*?)(<!-- bench:(?P=name):end -->)", re.S)


def results_file(name: str, where: str) -> Path:
    """The one ``benchmarks/*/results/NAME.json``."""
    found = sorted(BENCH.glob(f"*/results/{name}.json"))
    if len(found) != 1:
        raise ValueError(f"{where}: section bench:{name}: expected one results file benchmarks/<folder>/results/"
                         f"{name}.json, found {[str(path.relative_to(ROOT)) for path in found] or 'none'}")
    return found[0]


def benchmark_module(path: Path, record: dict, where: str):
    """The module that wrote the record ``path``: ``FOLDER.BENCHMARK``, or the package ``FOLDER`` itself."""
    folder = path.parent.parent.name
    benchmark = record.get("benchmark", path.stem)  # a file named after its benchmark need not say it
    if (BENCH / folder / f"{benchmark}.py").is_file():
        module = f"{folder}.{benchmark}"
    elif benchmark == folder and (BENCH / folder / "__init__.py").is_file():
        module = folder
    else:
        raise ValueError(f"{where}: section bench:{path.stem}: expected benchmarks/{folder}/{benchmark}.py or the "
                         f"package benchmarks/{benchmark}/ (the benchmark that wrote {path.name}), found none")
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))  # the folders import each other from benchmarks/, as the scripts do
    return importlib.import_module(module)


def render(section: str, where: str) -> str:
    """The Markdown of the results file NAME, by the ``markdown()`` (or, for ``NAME.VIEW``, the
    ``markdown_VIEW()``) of the benchmark that wrote it."""
    name, _, view = section.partition(".")
    path = results_file(name, where)
    record = json.loads(path.read_text())
    module = benchmark_module(path, record, where)
    function = f"markdown_{view}" if view else "markdown"
    if not hasattr(module, function):
        raise ValueError(f"{where}: section bench:{section}: expected a function {function}() in "
                         f"{Path(module.__file__).relative_to(ROOT)}, found none")
    return getattr(module, function)(record).rstrip("\n") + "\n"


def markdown(index: dict) -> str:
    """The benchmarks' index (``bench:index``, ``shared/results/index.json``): each folder, what it
    measures, and the headline views of its records, rendered here as in their own sections."""
    lines = ["| folder | what it measures | headline, from its last records |", "|---|---|---|"]
    for row in index["folders"]:
        headline = "<br>".join(render(view, "the index").strip() for view in row["headlines"])
        lines.append(f"| [{row['folder']}/]({row['folder']}/README.md) | {row['measures']} | "
                     f"{headline or 'the tables in its README'} |")
    return "\n".join(lines) + "\n"


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
    parser.add_argument("--print", dest="name", help="print the Markdown of the results file NAME (benchmarks/*/results/NAME.json) and exit")
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
        print(f"stale: {entry} (run python benchmarks/shared/report.py)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
