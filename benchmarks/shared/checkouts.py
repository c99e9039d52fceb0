"""What the benchmarks that run a checkout share: the commit they measured, an earlier commit's
files to measure beside it (git), and the environment a user's checkout runs in."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# as on a user's machine, Python writes its bytecode cache (this machine's environment turns it off)
USER_ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def commit_of(directory: Path, rev: str = "HEAD") -> str:
    """The full hash of ``rev`` in the git checkout ``directory``."""
    return subprocess.run(["git", "-C", str(directory), "rev-parse", rev], capture_output=True, text=True,
                          check=True).stdout.strip()


def export(repository: Path, rev: str, directory: Path) -> None:
    """The files of ``rev`` (``git archive``) into ``directory``."""
    archive = subprocess.run(["git", "-C", str(repository), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
