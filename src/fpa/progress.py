"""Progress a person can follow in a long job: a bar on a terminal, and in a log (Snakemake sends
every job's output to ``logs/<rule>/...``) a plain line every ``FPA_PROGRESS_EVERY_S`` seconds
(default 15) with what is done, the rate, the time spent and the time left; no carriage return.

    with progress(total, "train fpa", unit="step") as bar:
        for ...:
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import Executor, as_completed
from typing import Callable, Sequence, TextIO, TypeVar

from tqdm import tqdm

T, R = TypeVar("T"), TypeVar("R")
EVERY_S_ENV = "FPA_PROGRESS_EVERY_S"
DEFAULT_EVERY_S = 15.0
# one line of a log: no bar, whose width means nothing in a file
LOG_FORMAT = "{desc}: {n_fmt}/{total_fmt} {unit}s ({percentage:.0f}%), {rate_fmt}, {elapsed} spent, {remaining} left{postfix}"


class _Lines:
    """A log file as tqdm's output: each refresh one whole line, the carriage returns dropped."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.last = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").rstrip("\n")
        if line.strip() and line != self.last:  # closing repeats the last refresh when nothing moved since
            self.stream.write(line + "\n")
            self.last = line

    def flush(self) -> None:
        self.stream.flush()


def every_s() -> float:
    value = os.environ.get(EVERY_S_ENV, "")
    try:
        seconds = float(value) if value else DEFAULT_EVERY_S
    except ValueError:
        raise ValueError(f"{EVERY_S_ENV}: expected a number of seconds, got {value!r}") from None
    if seconds <= 0:
        raise ValueError(f"{EVERY_S_ENV}: expected a number of seconds > 0, got {value!r}")
    return seconds


def progress(total: int, desc: str, *, unit: str = "it", initial: int = 0, disable: bool = False,
             stream: TextIO | None = None) -> tqdm:
    """A tqdm bar on a terminal; on a log, a line at the start, every ``every_s()`` seconds and at the end."""
    stream = sys.stderr if stream is None else stream
    if stream.isatty():
        return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=stream, disable=disable)
    return tqdm(total=total, initial=initial, desc=desc, unit=unit, file=_Lines(stream), disable=disable,
                mininterval=every_s(), maxinterval=every_s(), miniters=1, bar_format=LOG_FORMAT, ascii=True,
                dynamic_ncols=False)


def map_in_pool(pool: Executor, function: Callable[[T], R], items: Sequence[T], desc: str, *, unit: str = "it",
                weight: Callable[[T], int] = lambda item: 1) -> list[R]:
    """``list(pool.map(function, items))``, with the progress of the items done (each counts
    ``weight(item)`` units) followed from this thread as they finish, in any order."""
    results: list = [None] * len(items)
    with progress(sum(map(weight, items)), desc, unit=unit) as bar:
        futures = {pool.submit(function, item): index for index, item in enumerate(items)}
        for future in as_completed(futures):
            index = futures[future]
            results[index] = future.result()
            bar.update(weight(items[index]))
    return results
