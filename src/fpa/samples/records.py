"""The one record type every benchmark and training source loads into."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class MathProblem:
    id: str
    problem: str
    answer: str
    source: str  # benchmark (or training source) name, e.g. "math500"

    def to_dict(self) -> dict:
        return asdict(self)
