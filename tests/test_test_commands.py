"""The README's two test commands are the tiers of docs/testing.md, and CI runs the full one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pytest_commands(text: str) -> list[str]:
    return [" ".join(command.split()) for command in re.findall(r"python -m pytest[^`\n&|;]*", text)]


def test_readme_tiers_docs_and_ci_name_the_same_commands():
    readme = pytest_commands((ROOT / "README.md").read_text())
    tiers = pytest_commands((ROOT / "docs" / "testing.md").read_text().split("\n\n## ")[1])
    ci = pytest_commands((ROOT / ".ci" / "run").read_text())
    fast, full = 'python -m pytest -q -n 2 -m "not slow"', "python -m pytest -q -n 2"
    assert readme == tiers == [fast, full], (readme, tiers)
    assert ci == [full]
