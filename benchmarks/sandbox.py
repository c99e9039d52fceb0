"""Throughput of sandboxed vs plain execution of MBPP-style test scripts.

    python benchmarks/sandbox.py                  # 200 scripts, a worker per core, 3 rounds
    python benchmarks/sandbox.py --n 400 --workers 4

Both modes run the same scripts through a process pool with the same timeout; the
plain mode is ``subprocess.run([python, script], timeout=...)`` in a temp dir, in its own
session like the sandbox (with sched_autogroup a new session is a new CPU-share group, which
on a shared machine would otherwise favour whichever mode calls setsid). Rounds
alternate plain/sandbox so that both see the same background load; the best round
of each is compared. Also times single runs (sequentially) to show where the
sandbox's time goes. Writes benchmarks/results/sandbox.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from fpa.io import write_json
from fpa.sandbox import Limits, Sandbox

TARGET_RATIO = 1.5  # sandboxed time / plain time
OUT = Path(__file__).resolve().parent / "results" / "sandbox.json"
LIMITS = Limits(timeout_s=10)

TEMPLATE = '''
def similar_elements(a, b):
    return tuple(sorted(set(a) & set(b)))

def is_not_prime(n):
    return n > 1 and any(n % d == 0 for d in range(2, int(n ** 0.5) + 1))

def heap_queue_largest(nums, n):
    import heapq
    return heapq.nlargest(n, nums)

assert similar_elements((3, 4, 5, {i}), (5, 7, 4, 10)) == tuple(sorted({{4, 5}} | ({{{i}}} & {{7, 10}})))
assert is_not_prime({i} * 2 + 4) is True
assert heap_queue_largest([25, 35, 22, 85, 14, 65, 75, 22, 58, {i}], 3) == sorted([85, 75, 65, {i}], reverse=True)[:3]
print("ok {i}")
'''

_sandbox: Sandbox | None = None


def make_scripts(n: int) -> list[str]:
    return [TEMPLATE.format(i=i) for i in range(n)]


def _init_worker() -> None:
    global _sandbox
    _sandbox = Sandbox(LIMITS)


def run_sandboxed(script: str) -> bool:
    return _sandbox.run_python(script).ok


def run_plain(script: str) -> bool:
    with tempfile.TemporaryDirectory(prefix="fpa-bench-") as workdir:
        Path(workdir, "main.py").write_text(script)
        try:
            done = subprocess.run([sys.executable, "main.py"], cwd=workdir, capture_output=True,
                                  timeout=LIMITS.timeout_s, start_new_session=True)  # fmt: skip
        except subprocess.TimeoutExpired:
            return False
    return done.returncode == 0


def throughput(pool: ProcessPoolExecutor, fn, scripts: list[str]) -> float:
    start = time.perf_counter()
    results = list(pool.map(fn, scripts, chunksize=1))
    elapsed = time.perf_counter() - start
    if not all(results):
        raise RuntimeError(f"{fn.__name__}: {results.count(False)} of {len(results)} scripts failed")
    return len(scripts) / elapsed


def latency_ms(fn, repeat: int) -> dict:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return {"median": round(statistics.median(times), 1), "p10": round(times[len(times) // 10], 1)}


def breakdown(repeat: int) -> dict:
    """Sequential single-run latencies: where the sandbox's time goes."""
    sandbox, script = Sandbox(LIMITS), make_scripts(1)[0]
    return {
        "plain: python script": latency_ms(lambda: run_plain(script), repeat),
        "plain: /usr/bin/true": latency_ms(lambda: subprocess.run(["/usr/bin/true"]), repeat),
        "sandbox: python script": latency_ms(lambda: sandbox.run_python(script), repeat),
        "sandbox: /usr/bin/true (fixed cost)": latency_ms(lambda: sandbox.run(["/usr/bin/true"]), repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200, help="scripts per round")
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="pool size (default: one per core)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating plain/sandbox rounds")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    scripts = make_scripts(args.n)
    rates: dict[str, list[float]] = {"plain": [], "sandbox": []}
    load_before = os.getloadavg()
    with ProcessPoolExecutor(args.workers, initializer=_init_worker) as pool:
        throughput(pool, run_sandboxed, scripts[: args.workers * 2])  # warm up the workers
        for _ in range(args.rounds):
            rates["plain"].append(throughput(pool, run_plain, scripts))
            rates["sandbox"].append(throughput(pool, run_sandboxed, scripts))
    best = {mode: max(values) for mode, values in rates.items()}
    ratio = best["plain"] / best["sandbox"]  # time ratio: sandboxed time / plain time
    report = {
        "n_scripts": args.n,
        "workers": args.workers,
        "rounds": args.rounds,
        "samples_per_s": {mode: [round(v, 1) for v in values] for mode, values in rates.items()},
        "best_samples_per_s": {mode: round(v, 1) for mode, v in best.items()},
        "time_ratio_sandbox_over_plain": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "target_met": ratio <= TARGET_RATIO,
        "latency_ms": breakdown(repeat=20),
        "machine": {
            "cpus": os.cpu_count(),
            "sched_autogroup": Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip(),
            "kernel": platform.release(),
            "python": platform.python_version(),
            "bwrap": subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        },
    }
    write_json(args.out, report)
    for mode, value in best.items():
        print(f"{mode:8s} {value:7.1f} samples/s   (rounds: {', '.join(f'{v:.1f}' for v in rates[mode])})")
    verdict = "met" if report["target_met"] else "NOT met"
    print(f"ratio (sandbox time / plain time) = {ratio:.2f}  target <= {TARGET_RATIO}  -> {verdict}")
    for name, value in report["latency_ms"].items():
        print(f"  {name:38s} median {value['median']:6.1f} ms   p10 {value['p10']:6.1f} ms")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
