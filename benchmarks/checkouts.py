"""The commit a benchmark measured, and an earlier commit's files to measure beside it (git only)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def commit_of(directory: Path, rev: str = "HEAD") -> str:
    """The full hash of ``rev`` in the git checkout ``directory``."""
    return subprocess.run(["git", "-C", str(directory), "rev-parse", rev], capture_output=True, text=True,
                          check=True).stdout.strip()


def export(repository: Path, rev: str, directory: Path) -> None:
    """The files of ``rev`` (``git archive``) into ``directory``."""
    archive = subprocess.run(["git", "-C", str(repository), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
