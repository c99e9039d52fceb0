"""Atomic file output: nothing is ever half written.

Every writer goes to a temporary sibling and renames it into place, so a killed
job leaves either the complete old state or nothing that looks like an output.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, directory: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success only."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    if directory:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    else:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        tmp = Path(name)
    # mkstemp/mkdtemp create owner-only entries; outputs get the usual umask-based mode.
    tmp.chmod((0o777 if directory else 0o666) & ~_UMASK)
    try:
        yield tmp
        if directory and target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        raise


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
    with open(path) as handle:
        return json.load(handle)


def iter_jsonl(path: str | os.PathLike, gzipped: bool | None = None) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of a JSONL file (``.gz`` transparently;
    ``gzipped`` says it for a file whose name does not, e.g. a temporary one).

    Lines are decoded as UTF-8 one by one, so a bad byte or bad JSON names the file and line
    (the locale's encoding would give a bare ``UnicodeDecodeError`` that names neither).
    """
    gzipped = str(path).endswith(".gz") if gzipped is None else gzipped
    opener = gzip.open if gzipped else open
    try:
        with opener(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as err:
                    raise ValueError(f"{path}:{number}: not UTF-8: byte 0x{raw[err.start]:02x} at column "
                                     f"{err.start + 1}") from None
                if not line.strip():
                    continue
                try:
                    yield number, json.loads(line.rstrip("\r\n"))
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{number}: invalid JSON ({err.msg} at column {err.colno})") from None
    except (gzip.BadGzipFile, EOFError) as err:  # a truncated or non-gzip ``.gz``
        raise ValueError(f"{path}: not a complete gzip file ({err})") from None


def read_jsonl(path: str | os.PathLike) -> list:
    """Read JSONL (``.gz`` transparently); a bad line names the file and line number."""
    return [value for _, value in iter_jsonl(path)]


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


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
