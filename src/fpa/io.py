"""Atomic file output: nothing is ever half written. Bounded JSONL input: no file takes more
memory than its bounds.

Every writer goes to a temporary sibling and renames it into place, so a killed
job leaves either the complete old state or nothing that looks like an output;
the next writer of that output removes the temporary it left, and only a temporary:
a directory named for its writer that holds the mark ``atomic_path`` wrote into it,
which no name of a config or catalog can give a finished output.

Every JSONL reader goes through ``iter_jsonl``, which reads one line at a time up to
``ReadBounds.line_bytes`` and stops a ``.gz`` at ``ReadBounds.total_bytes`` decompressed: a
1 MB gzip holding one 1 GiB line is refused after the first line's bound, not held in memory.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import json
import logging
import os
import re
import shutil
import socket
import stat
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Iterable, Iterator, Sequence

from fpa.safe_load import RECORD_LIMITS, load_json, parse_json


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()
_HOST = re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"
# ".<output name>.<pid>-<host>.<random>.tmp", as atomic_path names its temporaries (mkdtemp's random part)
_TEMP = re.compile(r"\.(.+)\.(\d+)-([A-Za-z0-9-]+)\.[a-z0-9_]+\.tmp")
_TEMP_SUFFIX = ".tmp"
# the longest parts of a temporary's name on any Linux host: a pid below pid_max's limit (2^22), a host
# name of HOST_NAME_MAX (64) bytes, and mkdtemp's 8 random characters
_LONGEST_PID, _LONGEST_HOST, _RANDOM_CHARS = 2 ** 22, "h" * 64, 8
#: What ``atomic_path`` writes into each temporary, beside the output (``<output name>`` + this suffix,
#: so never the output's own name): the mark by which the clean-up knows a temporary from a finished
#: output whose name happens to match ``_TEMP`` (a catalog's file, ``resources/data/<path>``, may be
#: named anything).
PARTIAL_MARK = ".partial"
_MARK_TEXT = "a partial output of fpa.io.atomic_path: removed once renamed into place, or once its writer is gone\n"
log = logging.getLogger(__name__)


def _temp_prefix(name: str, pid: int, host: str) -> str:
    return f".{name}.{pid}-{host}."


def longest_temporary_name(name: str) -> str:
    """The longest name ``atomic_path`` can give a temporary of the output ``name``, on any host: what
    the file system must hold besides the output itself (``fpa.config.wildcards`` bounds names by it)."""
    return _temp_prefix(name, _LONGEST_PID, _LONGEST_HOST) + "x" * _RANDOM_CHARS + _TEMP_SUFFIX


def is_temporary_name(name: str) -> bool:
    """``name`` is named as a temporary of ``atomic_path``: the start-up clean-up removes it once its
    writer is gone (``remove_stale_temps``)."""
    return _TEMP.fullmatch(name) is not None


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path of the same name as ``path``; rename it onto ``path`` on success only.

    The temporary lies in a directory beside ``path`` whose name carries the writer's pid and host,
    and which holds a mark (``PARTIAL_MARK``), so that the next writer of ``path`` removes what a
    killed one left (``remove_stale_temps``), leaves a running one's alone, and never takes a
    finished output for a temporary.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(target.parent, target.name)
    prefix = _temp_prefix(target.name, os.getpid(), _HOST)
    holder = Path(tempfile.mkdtemp(prefix=prefix, suffix=_TEMP_SUFFIX, dir=target.parent))
    mark, tmp = holder / (target.name + PARTIAL_MARK), holder / target.name
    try:
        mark.write_text(_MARK_TEXT)
        tmp.mkdir() if directory else tmp.touch()
        yield tmp
        _follow_umask(tmp)
        if directory and target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
        mark.unlink()
        holder.rmdir()
    finally:
        shutil.rmtree(holder, ignore_errors=True)  # what a failed writer left (nothing after a success)


def remove_stale_temps(directory: str | os.PathLike, name: str | None = None) -> list[Path]:
    """Remove the temporaries in ``directory`` (of the output ``name``, else of any) whose writer ran on
    this host and is no longer running: what a killed job left."""
    removed = []
    for stale in temps_of(directory, name):
        pid, host = _TEMP.fullmatch(stale.name).group(2, 3)
        if host != _HOST or _is_running(int(pid)):
            continue
        shutil.rmtree(stale, ignore_errors=True)
        log.warning("removed %s, left by process %s (no longer running)", stale, pid)
        removed.append(stale)
    return removed


def temps_of(directory: str | os.PathLike, name: str | None = None) -> list[Path]:
    """The temporaries of ``atomic_path`` writers in ``directory`` (of the output ``name``, else of any):
    the directories named as it names them that hold its mark."""
    matches = (_TEMP.fullmatch(entry.name) for entry in os.scandir(directory))
    return [Path(directory) / match.group(0) for match in matches
            if match is not None and (name is None or match.group(1) == name)
            and _is_marked(Path(directory) / match.group(0), match.group(1))]


def _is_marked(temp: Path, name: str) -> bool:
    mark = temp / (name + PARTIAL_MARK)
    try:
        return not temp.is_symlink() and mark.is_file() and mark.stat().st_size == len(_MARK_TEXT) \
            and mark.read_text() == _MARK_TEXT
    except (OSError, UnicodeDecodeError):
        return False


def _is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # no such process (an overflow: no such pid either)
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _follow_umask(tmp: Path) -> None:
    """Give the output the modes ``open()`` and ``mkdir()`` give: mkstemp, mkdtemp and libraries that write
    through their own temporary files (safetensors: 0600) create owner-only entries."""
    entries = [tmp, *tmp.rglob("*")] if tmp.is_dir() else [tmp]
    for entry in entries:
        mode = entry.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue
        executable = stat.S_ISDIR(mode) or mode & 0o111
        entry.chmod((0o777 if executable else 0o666) & ~_UMASK)


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w") as handle:
        for record in records:
            handle.write(json.dumps(record, sort_keys=True) + "\n")


def write_csv(path: str | os.PathLike, fields: Sequence[str], rows: Iterable[dict]) -> None:
    """Rows as CSV with a header of ``fields`` (in that order)."""
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields))
        writer.writeheader()
        writer.writerows(rows)


def read_json(path: str | os.PathLike) -> Any:
    """A JSON record, read with ``fpa.safe_load``'s limits (a bad one is a one-line ``LoadError``)."""
    return load_json(path, RECORD_LIMITS)


#: The longest JSONL line (one record) a reader takes where its caller knows no tighter bound:
#: 300 times the longest line of any mirror file (HumanEval+, 200 KB), room for a code problem's
#: tests (fpa.grading.code.tests keeps the first test whole, some TACO tests are megabytes).
MAX_LINE_BYTES = 64 << 20
#: The most a ``.gz`` may decompress to where its caller knows no tighter bound: 33 times the
#: largest decompressed mirror file (HumanEval+, 7.7 MB).
MAX_DECOMPRESSED_BYTES = 256 << 20


@dataclass(frozen=True)
class ReadBounds:
    """What one JSONL read may take: ``line_bytes`` per line and ``total_bytes`` in all (the bytes
    read, decompressed; None: ``MAX_DECOMPRESSED_BYTES`` for a ``.gz``, no bound for a plain file,
    whose size is on disk already). ``source`` says where they come from, for the refusal."""

    line_bytes: int = MAX_LINE_BYTES
    total_bytes: int | None = None
    source: str = "fpa.io defaults"

    def total_for(self, gzipped: bool) -> int | None:
        return self.total_bytes if self.total_bytes is not None or not gzipped else MAX_DECOMPRESSED_BYTES


def iter_jsonl(path: str | os.PathLike, gzipped: bool | None = None,
               bounds: ReadBounds = ReadBounds()) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSONL file (``.gz`` transparently;
    ``gzipped`` says it for a file whose name does not, e.g. a temporary one), within ``bounds``.

    Lines are decoded as UTF-8 one by one, so a bad byte or bad JSON names the file and line
    (the locale's encoding would give a bare ``UnicodeDecodeError`` that names neither).
    """
    gzipped = str(path).endswith(".gz") if gzipped is None else gzipped
    total_bound = bounds.total_for(gzipped)
    opener = gzip.open if gzipped else open
    try:
        with opener(path, "rb") as handle:
            number, total = 0, 0
            while raw := handle.readline(bounds.line_bytes + 1):
                number += 1
                total += len(raw)
                if len(raw) > bounds.line_bytes:
                    raise ValueError(f"{path}:{number}: line longer than {bounds.line_bytes} bytes, the bound on one "
                                     f"record ({bounds.source})")
                if total_bound is not None and total > total_bound:
                    raise over_bound(path, total_bound, bounds.source, f" by line {number}")
                value = _parse_line(path, number, raw)
                if value is not _BLANK:
                    yield number, value
    except (gzip.BadGzipFile, EOFError, zlib.error) as err:  # a truncated, corrupt or non-gzip ``.gz``
        raise ValueError(f"{path}: not a complete gzip file ({err})") from None


_BLANK = object()


def _parse_line(path: str | os.PathLike, number: int, raw: bytes) -> Any:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}:{number}: not UTF-8: byte 0x{raw[err.start]:02x} at column "
                         f"{err.start + 1}") from None
    if not line.strip():
        return _BLANK
    return parse_json(line.rstrip("\r\n"), f"{path}:{number}", RECORD_LIMITS)


def over_bound(what: str | os.PathLike, bound: int, source: str, where: str = "") -> ValueError:
    """The one-line refusal of input past ``bound`` bytes."""
    return ValueError(f"{what}: more than {bound} bytes{where}, the bound on this file ({source})")


def copy_bounded(source: IO[bytes], dest: IO[bytes], bound: int, what: str, why: str) -> int:
    """Copy ``source`` (a download, a decompressing reader) to ``dest``: at most ``bound`` bytes,
    else ``over_bound``. Returns the bytes copied."""
    copied = 0
    while chunk := source.read(min(1 << 20, bound + 1 - copied)):
        copied += len(chunk)
        if copied > bound:
            raise over_bound(what, bound, why)
        dest.write(chunk)
    return copied


def read_jsonl(path: str | os.PathLike) -> list:
    """Read JSONL (``.gz`` transparently); a bad line names the file and line number."""
    return [value for _, value in iter_jsonl(path)]


def sha256_file(path: str | os.PathLike) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


#: Files Snakemake itself writes into ``directory()`` outputs; not part of their content.
WORKFLOW_MARKERS = frozenset({".snakemake_timestamp"})


def sha256_path(path: str | os.PathLike) -> str:
    """sha256 of a file, or of a directory as the sorted list of (relative name, file sha256)."""
    path = Path(path)
    if path.is_file():
        return sha256_file(path)
    digest = hashlib.sha256()
    for child in sorted(p for p in path.rglob("*") if p.is_file() and p.name not in WORKFLOW_MARKERS):
        digest.update(f"{child.relative_to(path).as_posix()}\0{sha256_file(child)}\n".encode())
    return digest.hexdigest()
