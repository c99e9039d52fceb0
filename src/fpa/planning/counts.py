"""What each shipped config plans, as Snakemake's dry run counts it: docs/paper.md's generated
section (between ``MARKERS``), so no count is typed into prose and left to go stale.

    python -m fpa plan-counts --doc docs/paper.md     # rewrite the section in place
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from fpa.config.schema import load_schema
from fpa.io import write_text
from fpa.project import PROJECT_ROOT
from fpa.safe_load import load_yaml

MARKERS = ("<!-- plan-counts:start -->", "<!-- plan-counts:end -->")
DOC = "docs/paper.md"  # the document that holds the section
#: column -> the dry run's rules whose jobs it counts (``None``: every job, rule all included)
COLUMNS = {
    "jobs": None,
    "training runs": ("train", "train_online"),
    "evaluated checkpoints": ("evaluate", "generate_code"),
    "tables": ("aggregate",),
    "figures": ("figure",),
}


def job_stats(text: str) -> dict[str, int]:
    """Snakemake's 'Job stats' table of a dry run (rule -> jobs, and ``total``); {} when
    nothing is to be done."""
    if "Job stats:" not in text:
        return {}
    counts = {}
    for line in text.split("Job stats:", 1)[1].splitlines()[3:]:
        match = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
        if not match:
            break
        counts[match.group(1)] = int(match.group(2))
    return counts


@functools.lru_cache(maxsize=None)
def dry_run(config: Path, root: Path = PROJECT_ROOT) -> str:
    """What ``snakemake -n`` prints for ``config`` in an empty working directory (every job planned,
    its paths relative to that directory), run from ``root`` as a user runs it; run once per process
    (the README's counts and the containment test read the same run)."""
    with tempfile.TemporaryDirectory() as workdir:
        command = [sys.executable, "-m", "snakemake", "-s", str(root / "Snakefile"), "-d", workdir, "-n",
                   "--cores", "1", "--configfile", str(config)]
        result = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise ValueError(f"{config}: snakemake -n failed:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout


def dry_run_stats(config: Path, root: Path = PROJECT_ROOT) -> dict[str, int]:
    """The job stats of ``dry_run``."""
    return job_stats(dry_run(config, root))


def counts_row(stats: dict[str, int]) -> dict[str, int]:
    return {column: stats.get("total", 0) if rules is None else sum(stats.get(rule, 0) for rule in rules)
            for column, rules in COLUMNS.items()}


def experiment_configs(root: Path = PROJECT_ROOT) -> list[Path]:
    """The ``config/*.yaml`` that are experiments: those with every key the schema requires (not the
    file catalog, nor the paper's published numbers)."""
    required = set(load_schema()["required"])
    return [path for path in sorted((root / "config").glob("*.yaml"))
            if required <= set(load_yaml(path) or {})]


def counts_section(root: Path = PROJECT_ROOT) -> str:
    """The markdown table of every ``config/*.yaml`` (markers included)."""
    header = "| config | " + " | ".join(COLUMNS) + " |"
    lines = [MARKERS[0], header, "|---|" + "---:|" * len(COLUMNS)]
    for config in experiment_configs(root):
        row = counts_row(dry_run_stats(config, root))
        lines.append(f"| `config/{config.name}` | " + " | ".join(str(row[column]) for column in COLUMNS) + " |")
    return "\n".join(lines + [MARKERS[1]])


def update_doc(path: Path, root: Path = PROJECT_ROOT) -> bool:
    """Rewrite the section of ``path`` (atomically); whether it changed."""
    text = path.read_text()
    updated = with_section(text, counts_section(root), str(path))
    if updated != text:
        write_text(path, updated)
    return updated != text


def with_section(text: str, section: str, where: str) -> str:
    """``text`` with the part between the markers (markers included) replaced by ``section``."""
    start, end = text.find(MARKERS[0]), text.find(MARKERS[1])
    if start < 0 or end < start:
        raise ValueError(f"{where}: expected the markers {MARKERS[0]} ... {MARKERS[1]} in this order")
    return text[:start] + section + text[end + len(MARKERS[1]):]
