"""The speed of LiveCodeBench's stdout comparison: ours (``stdout_match``, decimals) against an earlier commit's.

    python benchmarks/grading/stdout_speed.py --baseline d0e18d6   # writes results/stdout_speed.json

The comparison runs on the host for every stdin test of LiveCodeBench and of the ``code_tests``
reward, so it must not slow grading down. Each workload is one pair of outputs of ``--lines`` lines
(10^5 by default): equal text (the common pass), numbers that are equal in another spelling
(``1.50`` for ``1.5``: every line takes the number rule), and two tokens per line, the last line
different (a wrong answer found at the end). Rounds alternate which function goes first; a call's
time is CPU time (a loaded machine does not inflate it). The ratio is the median over rounds of
ours / the baseline's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: the other folders
from grading.stdout_fuzz import ROOT, baseline_matches  # noqa: E402
from shared.checkouts import commit_of  # noqa: E402

from fpa.grading.code.stdout_match import stdout_matches  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "stdout_speed.json"


def workloads(lines: int) -> dict[str, tuple[str, str]]:
    """Name -> (printed, expected), each ``lines`` lines."""
    numbers = [str(index * 7919 % 1_000_003) for index in range(lines)]
    pairs = [f"{a} {b}" for a, b in zip(numbers, reversed(numbers))]
    return {
        "equal text": ("\n".join(numbers) + "\n", "\n".join(numbers) + "\n"),
        "equal numbers, other spelling": ("\n".join(f"{n}.50" for n in numbers), "\n".join(f"{n}.5" for n in numbers)),
        "two tokens, last line wrong": ("\n".join(pairs[:-1] + ["0 0"]), "\n".join(pairs)),
    }


def cpu_seconds(function, printed: str, expected: str) -> float:
    start = time.process_time()
    function(printed, expected)
    return time.process_time() - start


def measure(functions: dict, lines: int, rounds: int) -> dict:
    """Per workload: each function's median CPU seconds per call, and the median paired ratio."""
    results = {}
    for name, (printed, expected) in workloads(lines).items():
        times: dict[str, list[float]] = {who: [] for who in functions}
        for round_ in range(rounds):
            order = list(functions) if round_ % 2 == 0 else list(reversed(functions))
            for who in order:
                times[who].append(cpu_seconds(functions[who], printed, expected))
        verdicts = {who: function(printed, expected) for who, function in functions.items()}
        results[name] = {"median_s": {who: statistics.median(values) for who, values in times.items()},
                         "verdicts": verdicts,
                         "ratio": statistics.median(ours / base for ours, base in zip(times["ours"], times["baseline"]))}
    return results


def markdown(record: dict) -> str:
    baseline = record["baseline"][:7]
    lines = [f"{record['lines']:,} line pairs per call, median of {record['rounds']} paired rounds (CPU time), "
             f"ours at `{record['code']['commit'][:7]}` against `{baseline}`:", "",
             f"| workload | ours, ms | `{baseline}`, ms | ratio (ours / `{baseline}`) |", "|---|---:|---:|---:|"]
    for name, row in record["workloads"].items():
        lines.append(f"| {name} | {row['median_s']['ours'] * 1e3:.1f} | {row['median_s']['baseline'] * 1e3:.1f} | "
                     f"{row['ratio']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="a git revision (git archive) with the earlier comparison")
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from fpa.io import write_json
    from fpa.provenance.record import project_version

    functions = {"ours": stdout_matches, "baseline": baseline_matches(args.baseline)}
    load = os.getloadavg()[0]
    record = {"benchmark": "stdout_speed", "code": project_version(), "baseline": commit_of(ROOT, args.baseline),
              "lines": args.lines,
              "rounds": args.rounds, "workloads": measure(functions, args.lines, args.rounds),
              "load_average": [load, os.getloadavg()[0]]}
    write_json(args.out, record)
    print(markdown(record))


if __name__ == "__main__":
    main()
