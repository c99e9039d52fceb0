"""OpenMP's wait policy when the test workers share the cores: the fast tier's end-to-end run
(``tests/workflow/test_small_e2e.py``'s config) twice side by side, as two pytest-xdist workers run
two such tests on 2 cores, and alone, each under the default policy and under
``OMP_WAIT_POLICY=PASSIVE`` (what ``tests/conftest.py`` sets for the suite). Wall and CPU seconds
(user + sys of each run's Snakemake and its jobs); per round the ratio default / passive, over
rounds whose policy order alternates.

    python benchmarks/suite/wait_policy.py --rounds 3      # writes results/wait_policy.json

Run it on a quiet machine: it is the contention of its own runs that it measures.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the folders import each other from benchmarks/

from suite.tiers import machine  # noqa: E402  (it puts src/ on the path)

from fpa.io import write_json  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
POLICIES = ("default", "passive")
SHAPES = {"pair": 2, "alone": 1}  # runs side by side

ONE_RUN = """
import sys
from pathlib import Path
sys.path.insert(0, {helpers!r})
from workflow_helpers import copy_project, one_run_config, snakemake
base = Path(sys.argv[1])
project = copy_project(base)
snakemake(project, base / "work", one_run_config(project, {{"cpus_per_task": 2}}, base / "one.yaml"), "--cores", "2")
"""


def side_by_side(policy: str, runs: int, scratch: Path) -> dict:
    """``runs`` copies of the one-run DAG started together under ``policy``: the wall time until the
    last ends, and the CPU seconds of all of them."""
    env = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    if policy == "passive":
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    script = ONE_RUN.format(helpers=str(ROOT / "tests" / "workflow"))
    bases = [Path(tempfile.mkdtemp(dir=scratch)) for _ in range(runs)]
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    processes = [subprocess.Popen([sys.executable, "-c", script, str(base)], env=env) for base in bases]
    if any(process.wait() != 0 for process in processes):
        raise RuntimeError(f"a one-run DAG failed under the {policy} policy (scratch {scratch})")
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def spread(values: list[float]) -> dict:
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
            "max": round(max(values), 3), "n": len(values)}


def measure(rounds: int) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(rounds):
            order = POLICIES if index % 2 == 0 else POLICIES[::-1]
            for shape, runs in SHAPES.items():
                row = {"round": index + 1, "shape": shape, "order": list(order)}
                for policy in order:
                    row[policy] = side_by_side(policy, runs, Path(scratch))
                    print(f"round {index + 1} {shape} {policy}: {row[policy]}", flush=True)
                rows.append(row)
    summary = {shape: {f"{quantity}_default_over_passive": spread(
        [row["default"][quantity] / row["passive"][quantity] for row in rows if row["shape"] == shape])
        for quantity in ("wall_s", "cpu_s")} for shape in SHAPES}
    return {"benchmark": "wait_policy", "commit": commit, "cpu": machine(), "rounds": rows, "summary": summary}


def markdown(record: dict) -> str:
    cpu = record["cpu"]
    lines = [f"**{cpu['model']}** ({cpu['cores']} cores), commit `{record['commit'][:7]}`, "
             f"`python benchmarks/suite/wait_policy.py` ({len(record['rounds']) // len(SHAPES)} rounds)", "",
             "| runs | policy | wall s per round | CPU s per round | default / passive: wall (median, min–max) | "
             "CPU |", "|---|---|---|---|---|---|"]
    for shape, runs in SHAPES.items():
        mine = [row for row in record["rounds"] if row["shape"] == shape]
        ratios = record["summary"][shape]
        for policy in POLICIES:
            walls = ", ".join(f"{row[policy]['wall_s']:.0f}" for row in mine)
            cpus = ", ".join(f"{row[policy]['cpu_s']:.0f}" for row in mine)
            ratio = "" if policy == "passive" else " | ".join(
                f"{ratios[key]['median']:.2f} ({ratios[key]['min']:.2f}–{ratios[key]['max']:.2f})"
                for key in ("wall_s_default_over_passive", "cpu_s_default_over_passive"))
            label = "two side by side" if runs == 2 else "one alone"
            lines.append(f"| {label} | {policy} | {walls} | {cpus} | {ratio or ' | '} |")
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: the side-by-side pair's wall ratio."""
    ratio = record["summary"]["pair"]["wall_s_default_over_passive"]
    return (f"two end-to-end runs side by side take {ratio['median']:.2f}× as long under OpenMP's default wait "
            f"policy as under PASSIVE ({record['cpu']['model']})")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "wait_policy.json")
    args = parser.parse_args(argv)
    record = measure(args.rounds)
    write_json(args.out, record)
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
