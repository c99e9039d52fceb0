"""What the toy's default-run records say, computed: who beats whom, by how much, on which column.

    python benchmarks/shared/report.py --print toy_claims

``benchmarks/default_run/results/toy_claims.json`` names the records (``default_run`` records of
different CPUs) and the comparisons; nothing in it is a result. For each record this module
reads round 1's table and, for each comparison and column, gives the difference of the means
in points and in pooled standard deviations over the seeds, √((s₁² + s₂²) / 2) (every row has
the same number of seeds); then the statements that hold on every record's CPU, and those whose
sign differs between CPUs. The README and docs/toy.md state the toy's outcome only through it.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
CELL = re.compile(r"^(?P<mean>-?[\d.]+) ± (?P<std>[\d.]+)$")
CLEAR = 2.0  # pooled std: a difference at least this large is called clear


def parse_table(markdown: str) -> dict[str, dict[str, tuple[float, float]]]:
    """``{method: {column: (mean, std)}}`` of a ``toy.md`` table (bold and underline stripped)."""
    rows = [[re.sub(r"\*\*|</?u>", "", cell).strip() for cell in line.strip().strip("|").split("|")]
            for line in markdown.splitlines() if line.startswith("|") and not line.startswith("|---")]
    (_, *columns), *body = rows
    table = {}
    for method, *cells in body:
        matches = [CELL.match(cell) for cell in cells]
        if None in matches:
            raise ValueError(f"row {method}: expected cells 'mean ± std', got {cells}")
        table[method] = {column: (float(m["mean"]), float(m["std"])) for column, m in zip(columns, matches)}
    return table


def difference(table: dict, first: str, second: str, column: str) -> tuple[float, float]:
    """(``first`` − ``second`` in points, in pooled std) on ``column``; a pooled std of 0 gives ±inf."""
    (mean_a, std_a), (mean_b, std_b) = table[first][column], table[second][column]
    delta = mean_a - mean_b
    pooled = math.sqrt((std_a ** 2 + std_b ** 2) / 2)
    return delta, delta / pooled if pooled else math.copysign(math.inf, delta)


def record_table(name: str) -> tuple[dict, dict]:
    """(the record ``results/NAME.json``, round 1's parsed table)."""
    record = json.loads((RESULTS / f"{name}.json").read_text())
    return record, parse_table(record["rounds"][0]["table"])


def _cell(delta: float, pooled: float) -> str:
    return f"{delta:+.2f} ({pooled:+.1f})"


def _sides(differences: list[float], first: str, second: str) -> str | None:
    """``first`` is above/below ``second`` where every record agrees; None where the sign differs."""
    if all(d > 0 for d in differences):
        return f"{first} is above {second}"
    if all(d < 0 for d in differences):
        return f"{first} is below {second}"
    return None


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def summary(spec: dict, tables: dict[str, dict], cpus: dict[str, str]) -> list[str]:
    """The statements true on every record's CPU, the clear ones, and where the sign differs."""
    columns = list(next(iter(tables.values()))[spec["comparisons"][0][0]])
    agree, clear, differ = [], [], []
    for first, second in spec["comparisons"]:
        by_side: dict[str, list[str]] = {}
        for column in columns:
            pairs = [difference(table, first, second, column) for table in tables.values()]
            side = _sides([delta for delta, _ in pairs], first, second)
            if side is None:
                signs = ", ".join(f"{cpus[name]} {delta:+.2f}" for name, (delta, _) in zip(tables, pairs))
                differ.append(f"{first} − {second} on {column} ({signs})")
                continue
            by_side.setdefault(side, []).append(column)
            if all(abs(pooled) >= CLEAR for _, pooled in pairs):
                clear.append(f"{side} on {column}")
        agree += [f"{side} on {_join(cols)}" for side, cols in by_side.items()]
    every = f"On every CPU of the records ({_join(list(dict.fromkeys(cpus.values())))})"
    lines = [f"{every}: {'; '.join(agree) if agree else 'no comparison has one sign'}."]
    lines.append(f"By at least {CLEAR:g} pooled std on every CPU: {'; '.join(clear) if clear else 'none'}.")
    if differ:
        lines.append(f"The sign differs between CPUs: {'; '.join(differ)}.")
    return lines


def markdown(spec: dict) -> str:
    records, tables, cpus = {}, {}, {}
    for name in spec["records"]:
        records[name], tables[name] = record_table(name)
        cpus[name] = records[name]["cpu"]
    columns = list(next(iter(tables.values()))[spec["comparisons"][0][0]])
    lines = ["Computed from the records' tables by `benchmarks/default_run/claims.py`: the difference of the means in Pass@1 "
             "points and, in parentheses, in pooled standard deviations over the seeds.", "",
             "| record | CPU | difference | " + " | ".join(columns) + " |", "|---|---|---|" + "---:|" * len(columns)]
    for name, table in tables.items():
        label = f"`{name}` (`{records[name]['commit'][:7]}`)"
        cpu = cpus[name]
        for first, second in spec["comparisons"]:
            cells = " | ".join(_cell(*difference(table, first, second, column)) for column in columns)
            lines.append(f"| {label} | {cpu} | {first} − {second} | {cells} |")
            label = cpu = ""
    return "\n".join([*lines, "", *summary(spec, tables, cpus)]) + "\n"
