"""Throughput of MBPP+ grading (the EvalPlus harness of fpa.grading.code) with and without the sandbox.

    python benchmarks/grading/sandbox.py                           # 377 tasks x 8 samples, 4 blocks
    python benchmarks/grading/sandbox.py --tasks 40 --samples 4 --blocks 2 --workers 4

Both modes run the identical grader, ``grade_code_many("mbppplus", pairs, workers=W,
sandbox=...)``: pairs are grouped by task, W threads grade the groups, and each group is
one run of the EvalPlus harness (expected outputs from the canonical solution, then one
``untrusted_check`` process per candidate and split). The sandbox is
``Sandbox(mbppplus.LIMITS)`` (what ``make_sandbox("mbppplus")`` builds); the plain mode is
the grader's explicit opt-in ``mode="none"`` (same rlimits, wall clock, environment and
session, no bwrap). The tasks are split into ``--blocks`` blocks; each block is graded in
both modes back to back, the order alternating from block to block, so that both modes see
the same background load. Tasks come from the mirror ($FPA_DATA_MIRROR, file
``mbppplus/MbppPlus-v0.2.0.jsonl``). ``--exclude`` leaves out Mbpp/599 by default: its
canonical solution sums ranges of up to 10^8 numbers, so its 8 samples are one serial run of
about 300 s, which would decide the wall time of a 2-core run by itself, and its verdicts
depend on the load (``KNOWN_EXCEPTIONS``). The 8 samples of a task are fixed variants of its
canonical solution (``SAMPLES``): 4 correct, 4 wrong; ``--samples K`` takes the first K.
A profile of sequential single runs shows where a run's time goes. Writes
benchmarks/grading/results/sandbox.json. Both modes bound the run's total memory with the same
mechanism (``fpa.sandbox.bound``), so the ratio is the cost of bwrap alone.

    python benchmarks/grading/sandbox.py --bound-cost --baseline-src /tmp/fpa-before/src

``--bound-cost`` measures instead what the aggregate memory bound adds to one run: the
sandbox's fixed cost (``/usr/bin/true`` inside, ``mbppplus.LIMITS``) under each mechanism
that works here, and, with ``--baseline-src`` (the ``src`` of a checkout from before the
bound, e.g. ``git archive 9e581c8 src | tar -x -C /tmp/fpa-before``), without one. Each
variant runs in its own interpreter (``PYTHONPATH`` picks the code); ``--bound-rounds``
rounds with the order rotating, ``--bound-runs`` runs each; per round the median wall and
the launcher's CPU per run (the watchdog polls in the launcher), and each variant's
per-round ratio to the first. Writes benchmarks/grading/results/sandbox_bound.json.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import pickle
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from fpa.grading.code import grade_code_many, load_tasks, mbppplus, mirror_task_file
from fpa.io import write_json
from fpa.sandbox import Sandbox

TARGET_RATIO = 1.5  # sandboxed time / unsandboxed time
OUT = Path(__file__).resolve().parent / "results" / "sandbox.json"
BOUND_OUT = OUT.with_name("sandbox_bound.json")
SRC = Path(__file__).resolve().parents[2] / "src"
# One variant's runs, in a fresh interpreter; argv: Sandbox kwargs as JSON, number of runs.
FIXED_COST_LOOP = """
import json, statistics, sys, time
from fpa.grading.code import mbppplus
from fpa.sandbox import Sandbox
sandbox = Sandbox(mbppplus.LIMITS, **json.loads(sys.argv[1]))
sandbox.run(["/usr/bin/true"])  # warm: staging helper, page cache, the bound's probe
walls, cpu = [], time.process_time()
for _ in range(int(sys.argv[2])):
    start = time.perf_counter()
    assert sandbox.run(["/usr/bin/true"]).ok
    walls.append(time.perf_counter() - start)
print(json.dumps({"wall_ms": 1000 * statistics.median(walls),
                  "launcher_cpu_ms": 1000 * (time.process_time() - cpu) / len(walls)}))
"""
MODES = {"unsandboxed": "none", "sandbox": "bwrap"}  # label -> Sandbox mode

# Wrong on every top-level call after the first ``n_base`` (one count per process, so it passes
# the base split and fails the plus split); nested recursive calls are not counted.
PLUS_WRONG = '''
_fpa_impl, _fpa_depth, _fpa_calls = {entry}, [0], [0]

def {entry}(*args, **kwargs):
    _fpa_depth[0] += 1
    try:
        out = _fpa_impl(*args, **kwargs)
    finally:
        _fpa_depth[0] -= 1
    if _fpa_depth[0] == 0:
        _fpa_calls[0] += 1
        if _fpa_calls[0] > {n_base}:
            return object()
    return out
'''
IMPORTS = mbppplus.CANDIDATES.split("job = pickle.loads")[0]  # the candidates' harness up to reading its job
# name -> (expected verdict, completion built from the task); the first K are used.
SAMPLES = {
    "gold": (True, lambda t: t["prompt"] + t["canonical_solution"]),
    "fenced": (True, lambda t: f"Here is my solution.\n```python\n{t['canonical_solution'].strip()}\n```\nDone."),
    "imports": (True, lambda t: "import math\nimport re\nfrom typing import List\n" + t["canonical_solution"]),
    "main_guard": (True, lambda t: t["canonical_solution"]
                   + f"\n\nif __name__ == '__main__':\n    print({t['entry_point']})\n"),
    "none": (False, lambda t: f"def {t['entry_point']}(*args, **kwargs):\n    return None\n"),
    "raises": (False, lambda t: f"def {t['entry_point']}(*args, **kwargs):\n    raise NotImplementedError\n"),
    "syntax": (False, lambda t: t["canonical_solution"] + f"\ndef {t['entry_point']}(:\n"),
    "plus_wrong": (False, lambda t: t["canonical_solution"]
                   + PLUS_WRONG.format(entry=t["entry_point"], n_base=len(t["base_input"]))),
}  # fmt: skip


class TimedSandbox(Sandbox):
    """A ``Sandbox`` that also keeps the wall time of each of its runs."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.walls: list[tuple[float, str]] = []  # (wall s, task id)

    def run(self, argv, **kwargs):
        result = super().run(argv, **kwargs)
        job = kwargs.get("stdin")  # the grader's own pickle of its job, which names the task
        task_id = pickle.loads(job)["task_id"] if isinstance(job, bytes) else ""
        self.walls.append((result.wall_s, task_id))  # list.append is atomic; the grader's threads share this
        return result


def make_pairs(tasks: dict[str, dict], n_samples: int) -> tuple[list[tuple[str, str]], list[str]]:
    """``(completion, task_id)`` pairs, task by task, and the sample name of each pair."""
    names = list(SAMPLES)[:n_samples]
    pairs, kinds = [], []
    for task_id, task in tasks.items():
        for name in names:
            pairs.append((SAMPLES[name][1](task), task_id))
            kinds.append(name)
    return pairs, kinds


def grade_block(sandbox: TimedSandbox, pairs, tasks, workers: int) -> dict:
    """Grade ``pairs`` with the grader's own thread pool; wall time, summed run walls, verdicts."""
    sandbox.walls.clear()
    start = time.perf_counter()
    verdicts = grade_code_many("mbppplus", pairs, tasks=tasks, workers=workers, sandbox=sandbox)
    return {"seconds": time.perf_counter() - start, "runs": list(sandbox.walls), "verdicts": verdicts}


def split_blocks(tasks: dict[str, dict], n_blocks: int) -> list[dict[str, dict]]:
    """Contiguous blocks of tasks, as equal in count as possible."""
    items = list(tasks.items())
    n_blocks = max(1, min(n_blocks, len(items)))
    bounds = [round(i * len(items) / n_blocks) for i in range(n_blocks + 1)]
    return [dict(items[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]


def latency_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 1)


def profile(sandboxes: dict[str, TimedSandbox], task_id: str, tasks: dict, n_samples: int, repeat: int) -> dict:
    """Sequential single runs (median ms), both modes: what one grading run is made of."""
    pairs, _ = make_pairs({task_id: tasks[task_id]}, n_samples)
    threads = {name: str(os.cpu_count()) for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    steps = {
        "/usr/bin/true": lambda sb: sb.run(["/usr/bin/true"]),
        "python -c pass": lambda sb: sb.run_python("pass"),
        "python + the harness's imports": lambda sb: sb.run_python(IMPORTS),
        "  same, BLAS threads = cores": lambda sb: sb.run_python(IMPORTS, env=threads),
        f"grade {task_id} ({n_samples} samples)": lambda sb: grade_code_many(
            "mbppplus", pairs, tasks=tasks, workers=1, sandbox=sb),
    }  # fmt: skip
    table = {}
    for step, fn in steps.items():
        table[step] = {label: latency_ms(lambda: fn(sandbox), repeat) for label, sandbox in sandboxes.items()}
    return table


def compare_verdicts(verdicts: dict[str, list], kinds: list[str], pairs) -> dict:
    counts = {label: dict(sorted(collections.Counter(f"{kind}: {rule}" for kind, (_, rule) in zip(kinds, v)).items()))
              for label, v in verdicts.items()}  # fmt: skip
    sandboxed, plain = verdicts["sandbox"], verdicts["unsandboxed"]
    return {
        "verdict_counts": counts,
        "verdict_mismatches_between_modes": [
            {"task_id": pairs[i][1], "sample": kinds[i], "sandbox": sandboxed[i][1], "unsandboxed": plain[i][1]}
            for i in range(len(pairs)) if sandboxed[i][0] != plain[i][0]],
        "sandbox_verdicts_unlike_sample_kind": [
            {"task_id": pairs[i][1], "sample": kinds[i], "rule": sandboxed[i][1]}
            for i in range(len(pairs)) if sandboxed[i][0] != SAMPLES[kinds[i]][0]],
    }  # fmt: skip


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--tasks", type=int, default=None, help="first N MBPP+ tasks (default: all)")
    add("--exclude", nargs="*", default=["Mbpp/599"], help="task ids left out (default: Mbpp/599)")
    add("--samples", type=int, default=len(SAMPLES), help=f"samples per task, 1..{len(SAMPLES)}")
    add("--workers", type=int, default=os.cpu_count(), help="grader threads (default: one per core)")
    add("--blocks", type=int, default=4, help="rounds: blocks of tasks, each graded in both modes, order alternating")
    add("--profile-repeat", type=int, default=5, help="sequential runs per profile step (0: skip)")
    add("--data", type=Path, default=None, help="MBPP+ file (default: the mirror's)")
    add("--out", type=Path, default=None, help=f"default: {OUT} ({BOUND_OUT} with --bound-cost)")
    add("--bound-cost", action="store_true", help="measure the aggregate memory bound's cost per run instead")
    add("--baseline-src", type=Path, default=None, help="with --bound-cost: src/ of a checkout without the bound")
    add("--bound-rounds", type=int, default=5, help="with --bound-cost: rounds, the variants' order rotating")
    add("--bound-runs", type=int, default=30, help="with --bound-cost: runs of /usr/bin/true per variant and round")
    args = parser.parse_args(argv)
    args.out = args.out or (BOUND_OUT if args.bound_cost else OUT)
    if not 1 <= args.samples <= len(SAMPLES):
        parser.error(f"--samples: expected 1..{len(SAMPLES)}, got {args.samples}")
    return args


def machine(load_before, load_after) -> dict:
    return {
        "cpus": os.cpu_count(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "bwrap": subprocess.run(["bwrap", "--version"], capture_output=True, text=True).stdout.strip(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
    }


def bound_variants(baseline_src: Path | None) -> dict[str, tuple[Path, dict]]:
    """label -> (src dir, Sandbox kwargs): the baseline first, then each mechanism that works here."""
    from fpa.sandbox import bound

    variants = {"no bound (baseline)": (baseline_src, {})} if baseline_src else {}
    for name in bound.BOUNDS:
        if not isinstance(bound.probe(name), str):
            variants[name] = (SRC, {"aggregate": name})
    return variants


def fixed_cost(src: Path, kwargs: dict, runs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-c", FIXED_COST_LOOP, json.dumps(kwargs), str(runs)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def bound_cost(args) -> dict:
    """Per-round medians of every variant, and each variant's per-round ratio to the first."""
    variants = bound_variants(args.baseline_src)
    labels = list(variants)
    rounds = []
    load_before = os.getloadavg()
    for n in range(args.bound_rounds):
        order = labels[n % len(labels):] + labels[: n % len(labels)]
        rounds.append({label: fixed_cost(*variants[label], args.bound_runs) for label in order})
        print(f"round {n + 1}: " + ", ".join(f"{label} {r['wall_ms']:.1f} ms" for label, r in rounds[-1].items()),
              flush=True)  # fmt: skip
    first = labels[0]
    summary = {}
    for label in labels:
        walls = [r[label]["wall_ms"] for r in rounds]
        ratios = [r[label]["wall_ms"] / r[first]["wall_ms"] for r in rounds]
        summary[label] = {
            "wall_ms_median": round(statistics.median(walls), 1),
            "wall_ms_range": [round(min(walls), 1), round(max(walls), 1)],
            "launcher_cpu_ms_median": round(statistics.median(r[label]["launcher_cpu_ms"] for r in rounds), 2),
            f"wall_ratio_to_{first}_per_round": [round(x, 3) for x in ratios],
            f"wall_ratio_to_{first}_median": round(statistics.median(ratios), 3),
        }
    return {"program": "/usr/bin/true", "limits": "mbppplus.LIMITS", "runs_per_round": args.bound_runs,
            "rounds": args.bound_rounds, "variants": {k: {"src": str(v[0]), "sandbox_kwargs": v[1]}
                                                       for k, v in variants.items()},
            "summary": summary, "per_round": rounds, "machine": machine(load_before, os.getloadavg())}  # fmt: skip


def print_bound_cost(report: dict, args) -> None:
    first = next(iter(report["summary"]))
    load = report["machine"]
    print(f"\n/usr/bin/true in the sandbox, {args.bound_runs} runs x {args.bound_rounds} rounds, "
          f"load average {load['loadavg_before'][0]:.2f} -> {load['loadavg_after'][0]:.2f}")
    print(f"{'variant':22s} {'wall ms':>8s} {'(min-max)':>13s} {'launcher CPU ms':>16s} {'ratio to ' + first:>30s}")
    for label, row in report["summary"].items():
        ratios = row[f"wall_ratio_to_{first}_per_round"]
        spread = f"{row[f'wall_ratio_to_{first}_median']:.3f} ({min(ratios):.3f}-{max(ratios):.3f})"
        low, high = row["wall_ms_range"]
        print(f"{label:22s} {row['wall_ms_median']:8.1f} {f'({low:.1f}-{high:.1f})':>13s} "
              f"{row['launcher_cpu_ms_median']:16.2f} {spread:>30s}")  # fmt: skip
    print(f"wrote {args.out}")


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.bound_cost:
        report = bound_cost(args)
        write_json(args.out, report)
        print_bound_cost(report, args)
        return
    data = args.data or mirror_task_file("mbppplus")
    kept = [(task_id, task) for task_id, task in load_tasks("mbppplus", data).items() if task_id not in args.exclude]
    tasks = dict(kept[: args.tasks])
    pairs, kinds = make_pairs(tasks, args.samples)
    sandboxes = {label: TimedSandbox(mbppplus.LIMITS, mode=mode) for label, mode in MODES.items()}
    load_before = os.getloadavg()
    warm = dict(list(tasks.items())[: args.workers])
    for sandbox in sandboxes.values():  # page cache, staging helper
        grade_block(sandbox, make_pairs(warm, 1)[0], warm, args.workers)
    blocks = {label: [] for label in MODES}
    for n, block in enumerate(split_blocks(tasks, args.blocks)):
        block_pairs = make_pairs(block, args.samples)[0]
        for label in list(MODES) if n % 2 == 0 else list(MODES)[::-1]:
            blocks[label].append(grade_block(sandboxes[label], block_pairs, block, args.workers))
            took = blocks[label][-1]["seconds"]
            rate = len(block_pairs) / took
            print(f"block {n + 1}: {len(block)} tasks {label:12s} {rate:6.2f} samples/s ({took:.1f} s)", flush=True)
    load_after = os.getloadavg()
    seconds = {label: sum(b["seconds"] for b in v) for label, v in blocks.items()}
    runs = {label: [run for b in v for run in b["runs"]] for label, v in blocks.items()}
    run_wall = {label: sum(wall for wall, _ in v) for label, v in runs.items()}
    rates = {label: len(pairs) / seconds[label] for label in MODES}
    ratio = seconds["sandbox"] / seconds["unsandboxed"]
    verdicts = {label: [x for b in v for x in b["verdicts"]] for label, v in blocks.items()}
    table = {}
    if args.profile_repeat:
        table = profile(sandboxes, next(iter(tasks)), tasks, args.samples, args.profile_repeat)
    report = {
        "data": str(data),
        "tasks": len(tasks),
        "excluded": args.exclude,
        "samples_per_task": args.samples,
        "sample_kinds": {name: "correct" if SAMPLES[name][0] else "wrong" for name in list(SAMPLES)[: args.samples]},
        "n_samples": len(pairs),
        "workers": args.workers,
        "blocks": args.blocks,
        "samples_per_s": {label: round(rate, 2) for label, rate in rates.items()},
        "seconds": {label: round(v, 1) for label, v in seconds.items()},
        "block_seconds": {label: [round(b["seconds"], 1) for b in v] for label, v in blocks.items()},
        "time_ratio_sandbox_over_unsandboxed": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "target_met": ratio <= TARGET_RATIO,
        "run_wall_s": {label: round(v, 1) for label, v in run_wall.items()},
        "run_wall_ratio_sandbox_over_unsandboxed": round(run_wall["sandbox"] / run_wall["unsandboxed"], 3),
        "slowest_runs_s": {label: [(round(w, 1), t) for w, t in sorted(v, reverse=True)[:5]]
                           for label, v in runs.items()},  # fmt: skip
        **compare_verdicts(verdicts, kinds, pairs),
        "profile_median_ms": table,
        "machine": machine(load_before, load_after),
    }
    write_json(args.out, report)
    print_report(report, args)


def markdown(record: dict) -> str:
    """The record as Markdown: each mode's throughput, the ratio against the target, the verdict checks,
    and the profile of single runs."""
    load = record["machine"]
    lines = [f"MBPP+ {record['tasks']} tasks (left out: {', '.join(record['excluded']) or 'none'}) x "
             f"{record['samples_per_task']} samples = {record['n_samples']:,} samples, {record['workers']} workers, "
             f"{record['blocks']} blocks alternating the order; {load['cpus']} cores, 1-min load average "
             f"{load['loadavg_before'][0]:.1f} → {load['loadavg_after'][0]:.1f}.", "",
             "| mode | samples/s | seconds | summed run wall s | per block, s | slowest runs (s, task) |",
             "|---|---:|---:|---:|---|---|"]
    for label in MODES:
        slowest = ", ".join(f"{wall} {task}" for wall, task in record["slowest_runs_s"][label])
        lines.append(f"| {label} | {record['samples_per_s'][label]:.2f} | {record['seconds'][label]:.1f} | "
                     f"{record['run_wall_s'][label]:.1f} | {' '.join(map(str, record['block_seconds'][label]))} | "
                     f"{slowest} |")
    verdict = "PASS" if record["target_met"] else "FAIL"
    lines += ["", f"[{verdict}] sandbox time / unsandboxed time = {record['time_ratio_sandbox_over_unsandboxed']:.3f} "
              f"(target ≤ {record['target_ratio']}); summed run walls: "
              f"{record['run_wall_ratio_sandbox_over_unsandboxed']:.3f}. Verdicts that differ between modes: "
              f"{len(record['verdict_mismatches_between_modes'])}; sandbox verdicts unlike the sample's kind: "
              f"{len(record['sandbox_verdicts_unlike_sample_kind'])}."]
    if record["profile_median_ms"]:
        lines += ["", "Profile, sequential single runs, median over the repeats (ms):", "",
                  "| step | unsandboxed | sandbox | extra |", "|---|---:|---:|---:|"]
        lines += [f"| {step.strip()} | {row['unsandboxed']:.1f} | {row['sandbox']:.1f} | "
                  f"{row['sandbox'] - row['unsandboxed']:.1f} |" for step, row in record["profile_median_ms"].items()]
    return "\n".join(lines) + "\n"


def print_report(report: dict, args) -> None:
    print("\n" + markdown(report))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
