"""Planning speed: wall time of ``snakemake -n`` on the paper's whole grid (config/paper.yaml).

    python benchmarks/plan.py                       # 5 rounds; writes benchmarks/results/plan.json
    python benchmarks/plan.py --rounds 3 --baseline /tmp/old   # also time another checkout
    # a baseline checkout of an earlier commit: mkdir /tmp/old && git archive <rev> | tar -x -C /tmp/old

Every round runs each case in a fresh process, as a user would, in an empty working
directory (``-d``), so nothing is up to date and every job is planned:

  paper plan   ``snakemake -n --cores 1 --configfile config/paper.yaml`` (its job count is in the results)
  ci plan      the same with .test/config_ci/config.yaml (the toy CI grid)
  parse only   ``snakemake --list-rules`` of the paper config: the Snakefile and what
               ``common.smk`` does before the DAG (imports, config validation, the plan,
               code fingerprints), as in every checkout
  snakemake    ``python -c "import snakemake.api"``: the floor no workflow change can lower

Cases and checkouts are interleaved (rotated start per round) so that they see the same
background load; medians of wall time and of the process's CPU time (user + sys of it and
its children) are reported, and with ``--baseline`` the ratio current / baseline of each
round (pairs run back to back), its median and range. CPU time is what the code costs;
wall time is what a user waits and also counts other jobs' load (printed at start and
end). Target (issue 26): the paper plan's median wall time below 2 s on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fpa.planning.counts import job_stats

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "plan.json"
TARGET_S = 2.0



def cases(project: Path) -> dict[str, list[str]]:
    paper = str(project / "config" / "paper.yaml")
    snakemake = [sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile")]
    dry_run = [*snakemake, "-n", "--cores", "1"]
    return {
        "paper plan": [*dry_run, "--configfile", paper],
        "ci plan": [*dry_run, "--configfile", str(project / ".test" / "config_ci" / "config.yaml")],
        "parse only": [*snakemake, "--list-rules", "--configfile", paper],
        "snakemake": [sys.executable, "-c", "import snakemake.api"],
    }


def timed(command: list[str], project: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, output) of one fresh run in an empty working directory."""
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    with tempfile.TemporaryDirectory() as workdir:
        if "-s" in command:
            command = [*command, "-d", workdir]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        result = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=600)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, result.stdout + result.stderr


def measure(checkouts: dict[str, Path], rounds: int) -> dict[str, dict]:
    """Per checkout and case: jobs planned, wall and CPU times of each round."""
    commands = {name: cases(project) for name, project in checkouts.items()}
    names = list(next(iter(commands.values())))
    runs = {checkout: {name: {"wall_s": [], "cpu_s": [], "jobs": None} for name in names} for checkout in checkouts}
    for project in checkouts.values():
        timed(commands[next(iter(commands))]["snakemake"], project)  # warm the page cache
    order = [(checkout, name) for name in names for checkout in checkouts]
    for round_ in range(rounds):
        start = round_ % len(order)
        for checkout, name in order[start:] + order[:start]:
            wall, cpu, output = timed(commands[checkout][name], checkouts[checkout])
            row = runs[checkout][name]
            row["wall_s"].append(wall)
            row["cpu_s"].append(cpu)
            if name.endswith("plan"):
                row["jobs"] = job_stats(output).get("total")
    for by_case in runs.values():
        for row in by_case.values():
            row.update(wall_median_s=statistics.median(row["wall_s"]), wall_min_s=min(row["wall_s"]),
                       cpu_median_s=statistics.median(row["cpu_s"]))
    return runs


def paired_ratios(results: dict[str, dict]) -> dict[str, dict]:
    """current / baseline per round, per case and time (wall, CPU): median, min, max."""
    ratios = {}
    for name, row in results["current"].items():
        base = results["baseline"][name]
        ratios[name] = {}
        for key in ("wall_s", "cpu_s"):
            per_round = [now / then for now, then in zip(row[key], base[key])]
            ratios[name][key] = {"per_round": per_round, "median": statistics.median(per_round),
                                 "min": min(per_round), "max": max(per_round)}
    return ratios


def ratio_table(ratios: dict[str, dict]) -> str:
    lines = [f"{'case':12s} {'wall ratio med [min, max]':>28s} {'CPU ratio med [min, max]':>28s}"]
    for name, by_key in ratios.items():
        cells = [f"{r['median']:.2f} [{r['min']:.2f}, {r['max']:.2f}]" for r in (by_key["wall_s"], by_key["cpu_s"])]
        lines.append(f"{name:12s} {cells[0]:>28s} {cells[1]:>28s}")
    return "\n".join(lines)


def table(results: dict[str, dict]) -> str:
    lines = [f"{'checkout':10s} {'case':12s} {'jobs':>6s} {'wall med s':>10s} {'wall min s':>10s} {'CPU med s':>10s}"]
    for checkout, by_case in results.items():
        for name, row in by_case.items():
            jobs = "" if row["jobs"] is None else str(row["jobs"])
            lines.append(f"{checkout:10s} {name:12s} {jobs:>6s} {row['wall_median_s']:10.2f} "
                         f"{row['wall_min_s']:10.2f} {row['cpu_median_s']:10.2f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to time the same way")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    load_before = os.getloadavg()
    checkouts = {"current": ROOT, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    results = measure(checkouts, args.rounds)
    load_after = os.getloadavg()
    ratios = paired_ratios(results) if args.baseline else None
    text = table(results) + (f"\n\ncurrent / baseline, per round:\n{ratio_table(ratios)}" if ratios else "")
    paper = results["current"]["paper plan"]["wall_median_s"]
    verdict = f"[{'PASS' if paper < TARGET_S else 'FAIL'}] paper plan median wall {paper:.2f} s < {TARGET_S} s"
    print(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f} on {os.cpu_count()} CPUs")
    print(text)
    print(verdict)

    from fpa.io import write_json

    write_json(args.out, {
        "results": results, "paired_ratios": ratios, "table": text, "target": verdict, "rounds": args.rounds,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "loadavg_before": load_before, "loadavg_after": load_after},
        "checkouts": {name: str(path) for name, path in checkouts.items()},
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    })


if __name__ == "__main__":
    main()
