"""Containment: every path that a config, a catalog or a data file names stays inside the directory
it belongs to (the data mirror, ``resources/``, ``results/``, ``logs/`` of the work directory).

Two kinds of names reach the file system:

- a *name* becomes one path segment (a model, a method's run, a benchmark, a table, a figure, the
  experiment): ``SEGMENT``, a letter or digit then letters, digits, ``_``, ``.``, ``-``. So ``.``,
  ``..``, a hidden name, an option-like ``-x``, a separator, a space or a shell metacharacter
  never reaches a path or a job's command line;
- a *relative path* (a catalog entry's file, ``resources/data/<path>`` and ``<mirror>/<path>``):
  ``RELATIVE_PATH``, segments joined by ``/``, none of them empty, ``.`` or ``..`` and without
  control characters (a segment may hold spaces or quotes: jobs quote every path); joined to its
  directory and normalised, it must stay inside it (``inside``).

Containment is checked on the names, as written: symlinks are the user's own layout (``results/``
on a scratch disk, a mirror of links into a shared store) and are followed as they point.

Planning refuses a config or catalog that breaks either, one line naming the key, before any job
is planned; the workflow's wildcard constraints are these patterns, so no job's path can be
matched otherwise.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from fpa.safe_load import OneLineError

SEGMENT = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
_PATH_SEGMENT = r"(?!\.\.?(?:/|$))[^/\x00-\x1f\x7f]+"
RELATIVE_PATH = rf"{_PATH_SEGMENT}(?:/{_PATH_SEGMENT})*"
#: where a planned job writes, relative to the work directory
WORK_AREAS = ("results", "resources", "logs")


class ContainmentError(OneLineError):
    """A name or path that would leave its directory; ``str()`` is one line naming where it came from."""


def check_name(name: object, where: str) -> str:
    """``name`` if it is one path segment (``SEGMENT``); else ``ContainmentError`` naming ``where``."""
    if not isinstance(name, str) or not re.fullmatch(SEGMENT, name):
        raise ContainmentError(f"{where}: expected a name of letters, digits, '_', '.' and '-' that starts with a "
                               f"letter or digit (it names result paths), got {name!r}")
    return name


def check_relative(path: object, where: str) -> str:
    """``path`` if it is a ``RELATIVE_PATH`` (no ``.``, ``..``, ``//``, leading ``/``, control character)."""
    if not isinstance(path, str) or not re.fullmatch(RELATIVE_PATH, path):
        raise ContainmentError(f"{where}: expected a relative path of names joined by '/', without '.', '..', "
                               f"empty names or control characters, got {path!r}")
    return path


def inside(base: str | os.PathLike, path: str | os.PathLike, where: str) -> Path:
    """``base / path`` when, normalised, it is inside ``base``; else ``ContainmentError`` naming ``where``."""
    target = Path(base) / path
    if not _within(target, Path(base)):
        raise ContainmentError(f"{where}: {str(path)!r} leads to {os.path.normpath(os.path.abspath(target))}, "
                               f"outside {os.path.abspath(base)}")
    return target


def _within(path: Path, base: Path) -> bool:
    return Path(os.path.normpath(os.path.abspath(path))).is_relative_to(os.path.normpath(os.path.abspath(base)))


_PLANNED = re.compile(r"^\s+(?:output|log|benchmark): (.+)$", re.MULTILINE)


def planned_paths(dry_run: str) -> list[str]:
    """Every output, log and benchmark file of the jobs a ``snakemake -n`` printed."""
    return [path for match in _PLANNED.finditer(dry_run) for path in match.group(1).split(", ")]


def outside_work_areas(paths, workdir: str | os.PathLike) -> list[str]:
    """The ``paths`` (relative to ``workdir``) that lead outside its ``WORK_AREAS`` once normalised."""
    return [path for path in paths
            if not any(_within(Path(workdir) / path, Path(workdir) / area) for area in WORK_AREAS)]


__all__ = ["RELATIVE_PATH", "SEGMENT", "WORK_AREAS", "ContainmentError", "check_name", "check_relative", "inside",
           "outside_work_areas", "planned_paths"]
