"""docs/performance.md lists every benchmark script a user can run, and no script that is gone."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"report.py"}  # writes the documents' tables; not a benchmark


def test_every_runnable_benchmark_is_listed_once():
    runnable = {path.name for path in (ROOT / "benchmarks").glob("*.py")
                if 'if __name__ == "__main__":' in path.read_text()} - TOOLS
    listed = re.findall(r"^python benchmarks/(\w+\.py)", (ROOT / "docs" / "performance.md").read_text(), re.M)
    assert len(listed) == len(set(listed)), f"listed twice: {sorted(listed)}"
    assert set(listed) == runnable, (f"docs/performance.md: missing {sorted(runnable - set(listed))}, "
                                     f"gone {sorted(set(listed) - runnable)}")
