"""Gzip bombs: a small ``.gz`` that decompresses to gigabytes (concatenated members of one MiB of one
byte each, ~1 KB compressed), and JSONL records of an exact size to fill one with."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

MiB = 1 << 20
BLOCK = MiB  # one gzip member per MiB of content: ~1 KB each at level 9


def write_gzip_bomb(path: str | os.PathLike, size: int, head: bytes, unit: bytes = b"a") -> int:
    """A ``.gz`` decompressing to ``head`` then ``size`` bytes of ``unit`` repeated (``unit`` must
    divide ``BLOCK``): gzip members of one block each, concatenated. Returns the file's size."""
    assert BLOCK % len(unit) == 0, unit
    member = gzip.compress(unit * (BLOCK // len(unit)), 9, mtime=0)
    with open(path, "wb") as out:
        out.write(gzip.compress(head, 9, mtime=0))
        for _ in range(size // BLOCK):
            out.write(member)
    return Path(path).stat().st_size


def record(size: int) -> bytes:
    """One JSONL record of exactly ``size`` bytes (newline included), both a gsm8k row and a
    ``source: file`` benchmark's record."""
    frame = b'{"id": "bomb", "problem": "p", "question": "", "answer": "#### 1"}\n'
    return frame.replace(b'""', b'"' + b"q" * (size - len(frame)) + b'"', 1)
