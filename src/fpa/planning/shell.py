"""Command-line fragments a plan's rules splice into ``shell:``: every piece that can come
from a config (a path, a benchmark name) is quoted for the shell here, so a config string
arrives in ``python -m fpa`` as one argument and is never run as shell code."""

from __future__ import annotations

import shlex
from pathlib import Path


def shell_words(*words) -> str:
    return " ".join(shlex.quote(str(word)) for word in words)


def shell_prefix(basedir: str | Path) -> str:
    """The ``shell.prefix`` of every job: the package of this checkout first on PYTHONPATH (also
    inside --use-conda environments); braces doubled, as Snakemake formats the prefix."""
    src = shlex.quote(str(Path(basedir) / "src"))
    return f"export PYTHONPATH={src}:${{PYTHONPATH:-}}; ".replace("{", "{{").replace("}", "}}")
