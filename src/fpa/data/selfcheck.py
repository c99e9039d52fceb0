"""Gold self-check: the gold answer, boxed, must grade correct against itself.

For every record of every benchmark file, ``The final answer is \\boxed{<gold>}``
is graded against ``<gold>`` with ``grade_many``. A record is an *exception* when
Math-Verify did not confirm it (rule other than ``math_verify``): it is then
either rescued by the string rule (``exact_string``, still correct) or wrong.
Every exception must be in ``KNOWN_EXCEPTIONS`` with its reason; the full
mirror's figures and the reasons are in ``docs/gold_selfcheck.md``.
"""

from __future__ import annotations

import os
from pathlib import Path

from fpa.catalog import CATALOG, declared_duplicates, read_benchmarks_config
from fpa.data.benchmarks import load_benchmark
from fpa.grading.math import grade_many

COMPLETION = "The final answer is \\boxed{{{gold}}}"

_UNITS = "Math-Verify's default units normalisation strips trailing single letters as units"
_PUNCT = "trailing punctuation inside the upstream \\boxed{}; Math-Verify finds no parse"
_THOUSANDS = "thousands separators ',\\!' inside \\frac; Math-Verify finds no parse"
_EMPTY = "empty gold upstream: never gradable correct"

# id -> why Math-Verify does not confirm the gold against itself; "(wrong)" marks
# the golds that fail outright. Figures and consequences: docs/gold_selfcheck.md.
KNOWN_EXCEPTIONS: dict[str, str] = {
    # Benchmarks (default run).
    "gaokao2023en/83": f"'b > a > c': {_UNITS} ('b >' is left); exact_string rescues",
    "gaokao2023en/107": "'145solution:': stray 'solution:' in the upstream answer; exact_string only",
    "gaokao2023en/167": f"(wrong) {_EMPTY}; the answer 3/10 sits in the question text",
    "gaokao2023en/192": f"(wrong) {_EMPTY}; the answer 'A' sits in the question text",
    "olympiadbench/1782": "'m_{\\max }=n^{2}-n-1': subscripted \\max lhs not parsed; exact_string only",
    "olympiadbench/2045": "'t(0,4]': stray 't' before the interval upstream; exact_string only",
    # Training sources (benchmarks=["math_train", "math_test"]).
    "train/number_theory/7115.json": f"(wrong) {_EMPTY}: the solution ends in '\\boxed{{}}'",
    "train/number_theory/7117.json": f"(wrong) {_EMPTY}: the solution ends in '\\boxed{{}}'",
    "train/counting_and_probability/251.json": _THOUSANDS,
    "train/number_theory/794.json": _THOUSANDS,
    "test/counting_and_probability/861.json": _THOUSANDS,
    "train/geometry/536.json": f"'30^\\circ.': {_PUNCT}",
    "train/number_theory/852.json": f"'43_5.': {_PUNCT} (base subscript)",
    "train/number_theory/1012.json": f"'\\text{{(E)}},': {_PUNCT}",
    "train/prealgebra/635.json": f"'7\\text{{ hours}}.': {_PUNCT}",
    "train/intermediate_algebra/1918.json": f"'a + b + c': {_UNITS} ('a +' is left)",
    "train/precalculus/1311.json": f"'\\sin^2 t': {_UNITS} ('\\sin^2' is left)",
    "train/prealgebra/281.json": "'05\\!:\\!00': a clock time; Math-Verify parses ':' as division (zoo)",
}


def gold_selfcheck(
    mirror_dir: str | os.PathLike,
    benchmarks: list[str] | None = None,
    workers: int = 2,
    timeout_s: float = 10.0,
    config_path: str | os.PathLike = CATALOG,
) -> dict:
    """Grade every gold against itself; return per-benchmark counts and the exceptions.

    ``benchmarks`` defaults to every available entry of the ``benchmarks`` section;
    names from the ``training`` section (``math_train``, ``math_test``) may be given.
    Returns ``{"benchmarks": {name: {"correct", "math_verify", "total"}},
    "exceptions": [{"benchmark", "id", "gold", "extracted", "rule", "correct",
    "known"}]}``, where ``known`` is the documented reason or None.
    """
    config = read_benchmarks_config(config_path)
    entries = {**config["benchmarks"], **config.get("training", {})}
    if benchmarks is None:
        benchmarks = [name for name, entry in config["benchmarks"].items() if "missing" not in entry]
    unknown = [name for name in benchmarks if name not in entries or "missing" in entries[name]]
    if unknown:
        available = sorted(name for name, entry in entries.items() if "missing" not in entry)
        raise ValueError(f"benchmarks: unknown or missing {unknown}; expected some of {available}")
    problems = []
    for name in benchmarks:
        entry = entries[name]
        problems += load_benchmark(entry["loader"], Path(mirror_dir) / entry["path"], source=name,
                                   duplicates=declared_duplicates(entry))
    pairs = [(COMPLETION.format(gold=problem.answer), problem.answer) for problem in problems]
    results = grade_many(pairs, workers=workers, timeout_s=timeout_s)
    summary = {name: {"correct": 0, "math_verify": 0, "total": 0} for name in benchmarks}
    exceptions = []
    for problem, result in zip(problems, results):
        counts = summary[problem.source]
        counts["total"] += 1
        counts["correct"] += result.correct
        counts["math_verify"] += result.correct and result.rule == "math_verify"
        if result.rule != "math_verify" or not result.correct:
            exceptions.append(
                {
                    "benchmark": problem.source,
                    "id": problem.id,
                    "gold": problem.answer,
                    "extracted": result.extracted,
                    "rule": result.rule,
                    "correct": result.correct,
                    "known": KNOWN_EXCEPTIONS.get(problem.id),
                }
            )
    return {"benchmarks": summary, "exceptions": exceptions}
