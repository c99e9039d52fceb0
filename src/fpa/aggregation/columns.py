"""A table's benchmark columns (``tables.<name>.columns``): a benchmark name reads its Pass@1,
``{bench: aime, metric: pass@k, k: 8}`` its unbiased pass@k (``fpa.evaluation.metrics``) from
the same evaluation file's kept correctness matrix, at most the benchmark's ``n`` samples.

A column's key names it in ``config/paper_results.yaml`` and in the tables' JSON: the
benchmark (Pass@1), ``<bench>:pass@<k>`` (pass@k), and ``avg`` for the Avg. column.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from fpa.aggregation.grid import PASS_AT_1
from fpa.errors import ConfigError

AVG_KEY = "avg"


@dataclass(frozen=True)
class Column:
    key: str
    bench: str
    metric: str  # "pass@1" or "pass@<k>"
    header: str


def column_bench(entry) -> str:
    """The benchmark a column entry evaluates (a name, or a mapping's ``bench``)."""
    return entry["bench"] if isinstance(entry, Mapping) else entry


def parse_column(entry, config: Mapping, where: str) -> Column:
    """One ``columns`` entry checked against ``config``'s benchmarks (names the key on error)."""
    bench = column_bench(entry)
    if bench not in config["benchmarks"]:
        raise ConfigError(f"{where}: unknown benchmark {bench!r}; expected one of {sorted(config['benchmarks'])}")
    spec = config["benchmarks"][bench]
    label = spec.get("label") or bench
    if not isinstance(entry, Mapping) or entry.get("metric", PASS_AT_1) == PASS_AT_1:
        return Column(bench, bench, PASS_AT_1, label)
    k, n = entry.get("k"), spec["n"]
    if not isinstance(k, int) or not 1 <= k <= n:
        raise ConfigError(f"{where}.k: expected an integer 1 <= k <= n = {n} (benchmarks.{bench}.n), got {k!r}")
    return Column(f"{bench}:pass@{k}", bench, f"pass@{k}", f"{label} pass@{k}")
