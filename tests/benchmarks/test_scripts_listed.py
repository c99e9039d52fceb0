"""Each benchmark folder's README lists every script a user can run there, once, and no script that
is gone; the index (benchmarks/README.md) has a row for every folder."""

import json
import re
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
SHARED = "shared"  # what the folders share, report.py included: not a benchmark
FOLDERS = sorted(path.parent.name for path in BENCH.glob("*/__init__.py") if path.parent.name != SHARED)


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_runnable_benchmark_is_listed_once_in_its_folder(folder):
    runnable = {path.name for path in (BENCH / folder).glob("*.py")
                if 'if __name__ == "__main__":' in path.read_text()}
    listed = re.findall(rf"^python benchmarks/{folder}/(\w+\.py)", (BENCH / folder / "README.md").read_text(), re.M)
    assert len(listed) == len(set(listed)), f"benchmarks/{folder}/README.md: listed twice: {sorted(listed)}"
    assert set(listed) == runnable, (f"benchmarks/{folder}/README.md: missing {sorted(runnable - set(listed))}, "
                                     f"gone {sorted(set(listed) - runnable)}")


def test_the_index_has_a_row_for_every_folder():
    index = json.loads((BENCH / SHARED / "results" / "index.json").read_text())
    rows = [row["folder"] for row in index["folders"]]
    assert sorted(rows) == FOLDERS, f"benchmarks/shared/results/index.json: rows {rows}, folders {FOLDERS}"


def test_no_script_is_left_outside_a_folder():
    assert sorted(path.name for path in BENCH.glob("*.py")) == []
