"""Paired rounds, as every benchmark here times: a round runs each case once, back to back, each round
starting one case later (A B, B A, ...), so that a slow stretch of a shared machine falls on every case
alike; a ratio is taken within a round, then given as its median and range over the rounds."""

from __future__ import annotations

import statistics


def rotated(cases: list, round_: int) -> list:
    """``cases`` in round ``round_``'s order: each round starts one case later."""
    start = round_ % len(cases)
    return cases[start:] + cases[:start]


def spread(values) -> dict:
    """Median and range of per-round values, and how many rounds."""
    values = list(values)
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def paired_ratio(numerators, denominators) -> dict:
    """The spread of numerator / denominator, paired by round."""
    return spread(a / b for a, b in zip(numerators, denominators, strict=True))


def spread_text(s: dict, digits: int = 3) -> str:
    """A spread as ``median [min–max]``."""
    return f"{s['median']:.{digits}f} [{s['min']:.{digits}f}–{s['max']:.{digits}f}]"
