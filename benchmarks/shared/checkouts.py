"""What the benchmarks that run a checkout share: the commit and the CPU they measured on, an earlier
commit's files to measure beside it (git), and the environment a user's checkout runs in."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from fpa.provenance.cpu import cpu_facts

# as on a user's machine, Python writes its bytecode cache (this machine's environment turns it off)
USER_ENVIRONMENT = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def commit_of(directory: Path, rev: str = "HEAD") -> str:
    """The full hash of ``rev`` in the git checkout ``directory``."""
    return subprocess.run(["git", "-C", str(directory), "rev-parse", rev], capture_output=True, text=True,
                          check=True).stdout.strip()


def machine() -> dict:
    """The CPU a record was measured on (every record names it): vendor, model and core count."""
    facts = cpu_facts()
    return {"vendor": facts["vendor"], "model": facts["model"], "cores": os.cpu_count()}


def cores_text(record: dict, cores: int | None = None) -> str:
    """``2 cores of an AMD EPYC``; ``cores`` (the count such a record kept) alone for a record written
    before records named their CPU."""
    cpu = record.get("cpu")
    return f"{cpu['cores']} cores of an {cpu['model']}" if cpu else f"{cores} cores, the CPU not recorded"


def export(repository: Path, rev: str, directory: Path) -> None:
    """The files of ``rev`` (``git archive``) into ``directory``."""
    archive = subprocess.run(["git", "-C", str(repository), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
