"""Loss-head memory: chunked vs naive FPA head over the number of rows and the chunk size, CPU.

    nice python benchmarks/memory/head_memory.py            # writes benchmarks/memory/results/head_memory.json

Each measurement is the engine benchmark's loss-head case (``engine.py``: FPA statistics
logp, ref_logp, hat_logp, forward + backward of ``logp.sum()``; ``token_statistics``
chunked vs ``token_statistics_naive`` with its [N, V] autograd graph), one per fresh
subprocess, its ``extra MB`` = VmHWM after the step minus RSS before it
(``harness.peak_memory``). N is the number of rows (tokens of one sequence), V = 151,936.
A chunk at least N rows long is one chunk of N rows. The width d only sets the size of
the inputs, not of the [rows, V] buffers that decide the ratio; d = 64 keeps the naive
cases quick. Rounds repeat every case in a fresh process; the table gives the median
ratio and its range over the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.harness import spawn  # noqa: E402
from training import engine  # noqa: E402

from fpa.io import write_json  # noqa: E402

OUT = Path(__file__).parent / "results" / "head_memory.json"


def _ints(text):
    return [int(x) for x in text.split(",")]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--rows", type=_ints, default=[256, 512, 1024, 2048], help="comma-separated row counts N")
    add("--chunks", type=_ints, default=[128, 512, 1024, 2048], help="comma-separated chunk sizes")
    add("--vocab", type=int, default=151_936)
    add("--hidden", type=int, default=64)
    add("--rounds", type=int, default=3, help="fresh-process repeats of every case")
    add("--out", default=str(OUT))
    return parser.parse_args(argv)


def measure(args, rows, case, chunk, workdir):
    """extra MB of one head step of ``case`` (head_naive / head_chunked) in a fresh engine worker."""
    engine_args = engine.parse_args(["--vocab", str(args.vocab), "--hidden", str(args.hidden), "--batch", "1",
                                     "--seq", str(rows), "--chunk-size", str(chunk), "--threads", "1"])
    return spawn(engine.__file__, engine_args, case, workdir, skip=("worker", "workdir", "out"))["extra_mb"]


def run(args):
    results = {"args": {k: v for k, v in vars(args).items() if k not in ("out", "table")},
               "load_average": [os.getloadavg()[0]], "cpu_count": os.cpu_count(), "points": []}
    with tempfile.TemporaryDirectory() as workdir:
        for rows in args.rows:
            rounds = []
            for _ in range(args.rounds):
                naive = measure(args, rows, "head_naive", args.chunks[0], workdir)
                rounds.append({"naive_extra_mb": naive, "chunked_extra_mb": {
                    str(chunk): measure(args, rows, "head_chunked", chunk, workdir) for chunk in args.chunks}})
            results["points"].append({"rows": rows, "rounds": rounds})
            results["load_average"].append(os.getloadavg()[0])
            write_json(args.out, results)
            print(f"rows {rows}: naive {rounds[0]['naive_extra_mb']:.0f} MB extra", flush=True)
    print(markdown(results))


def markdown(results):
    """One row per N: naive extra MB and, per chunk size, chunked/naive extra memory (median [range])."""
    a = results["args"]
    chunks = a["chunks"]
    lines = [f"V = {a['vocab']:,}, d = {a['hidden']}, fp32, 1 thread, CPU; {a['rounds']} rounds, each case in a fresh "
             f"process; 1-min load average {results['load_average'][0]:.1f} → {results['load_average'][-1]:.1f} on "
             f"{results['cpu_count']} cores.", "",
             "| rows N | naive extra MB | " + " | ".join(f"chunk {c:,}: chunked / naive" for c in chunks) + " |",
             "|---:|---:|" + "---|" * len(chunks)]
    for point in results["points"]:
        naive = [r["naive_extra_mb"] for r in point["rounds"]]
        cells = []
        for chunk in chunks:
            ratios = [r["chunked_extra_mb"][str(chunk)] / r["naive_extra_mb"] for r in point["rounds"]]
            cells.append(f"{statistics.median(ratios):.3f} [{min(ratios):.3f}–{max(ratios):.3f}]")
        lines.append(f"| {point['rows']:,} | {statistics.median(naive):,.0f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    run(parse_args())
