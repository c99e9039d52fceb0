"""docs/paper.md's plan counts come from the dry run (fpa.planning.counts), never typed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from fpa.planning.counts import DOC, MARKERS, counts_row, counts_section, job_stats, with_section

ROOT = Path(__file__).resolve().parents[2]
DRY_RUN = """Building DAG of jobs...
Job stats:
job                   count
------------------  -------
train                     6
train_online              2
evaluate                  9
aggregate                 1
figure                    4
figure_table              1
all                       1
total                    24

Reasons:
"""


def test_job_stats_and_the_columns_they_fill():
    stats = job_stats(DRY_RUN)
    assert stats["total"] == 24 and stats["figure_table"] == 1
    assert counts_row(stats) == {"jobs": 24, "training runs": 8, "evaluated checkpoints": 9, "tables": 1,
                                 "figures": 4}
    assert job_stats("Nothing to be done (all requested files are present and up to date).") == {}


def test_with_section_replaces_only_between_the_markers():
    text = f"intro\n{MARKERS[0]}\nold\n{MARKERS[1]}\noutro\n"
    assert with_section(text, f"{MARKERS[0]}\nnew\n{MARKERS[1]}", "R.md") == f"intro\n{MARKERS[0]}\nnew\n{MARKERS[1]}\noutro\n"
    with pytest.raises(ValueError, match="R.md: expected the markers"):
        with_section(f"{MARKERS[1]} {MARKERS[0]}", "x", "R.md")


def test_documented_counts_are_the_dry_runs():
    doc = (ROOT / DOC).read_text()
    current = doc[doc.index(MARKERS[0]):doc.index(MARKERS[1]) + len(MARKERS[1])]
    assert current == counts_section(ROOT), f"{DOC}: plan counts are stale: run python -m fpa plan-counts --doc {DOC}"
