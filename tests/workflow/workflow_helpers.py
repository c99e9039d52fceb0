"""What the workflow tests share: a copy of the project, a Snakemake call, the dry-run job counts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_project(base: Path) -> Path:
    """A copy of what the workflow runs from (so that a test can edit its code)."""
    project = base / "project"
    project.mkdir()
    for name in ("Snakefile", "workflow", "config", "envs", "src", ".test"):
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, project / name)
    return project


def snakemake(project: Path, workdir: Path, config: Path, *args: str, check: bool = True,
              background: bool = False, timeout: int = 1200):
    """``snakemake -s project/Snakefile -d workdir ... --configfile config`` with the project's package."""
    # --configfile takes several values: it goes last, so that a target is not read as a config file
    command = [sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile"), "-d", str(workdir), *args,
               "--configfile", str(config)]
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    if background:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def job_counts(text: str) -> dict[str, int]:
    """Snakemake's 'Job stats' table of a dry run, ``total`` included; {} when nothing is to be done."""
    if "Nothing to be done" in text:
        return {}
    counts = {}
    for line in text.split("Job stats:")[1].splitlines()[3:]:
        match = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
        if not match:
            break
        counts[match.group(1)] = int(match.group(2))
    return counts
