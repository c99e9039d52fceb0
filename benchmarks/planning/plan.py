"""Planning speed: wall time of ``snakemake -n`` on the paper's whole grid (config/paper.yaml).

    python benchmarks/planning/plan.py                       # 5 rounds; writes benchmarks/planning/results/plan.json
    python benchmarks/planning/plan.py --baseline 8c1828a    # also time an earlier commit, paired per round

Every round runs each case in a fresh process, as a user would, in an empty working
directory (``-d``), so nothing is up to date and every job is planned:

  paper plan   ``snakemake -n --cores 1 --configfile config/paper.yaml`` (every job of the paper grid),
               with the executor plugins installed here (the test extra installs the SLURM one)
  paper plan, no SLURM plugin
               the same with Snakemake's plugin discovery blind to the SLURM executor, as in an
               install without it (``pip install -e .``); its module imports pandas
  ci plan      the same with .test/config_ci/config.yaml (the toy CI grid)
  parse only   ``python -c`` of what ``common.smk`` does before the DAG: imports,
               config validation, run grid, code fingerprints of every rule
  snakemake    ``python -c "import snakemake.api"``: the floor no workflow change can lower

Python's bytecode cache is on (``PYTHONDONTWRITEBYTECODE`` is dropped from the environment) and
warm, as on every call after a checkout's first: a warm-up round writes it. Cases are
interleaved (rotated start per round) so that they see the same background load; medians of
wall time and of the process's CPU time (user + sys of it and its children) are reported,
and with ``--baseline`` the ratio current / baseline of each round's pair. CPU time is what
the code costs; wall time is what a user waits and also counts other jobs' load (printed at
start and end). Target: the paper plan's median wall time below 2 s.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.checkouts import USER_ENVIRONMENT, commit_of, cores_text, export, machine  # noqa: E402
from shared.rounds import paired_ratio, rotated, spread, spread_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "results" / "plan.json"
TARGET_S = 2.0  # issue 26: it is planned on every snakemake call

PARSE_ONLY = """
from fpa.grading import grader_module
from fpa.objectives import get_objective
from fpa.planning import judge
from fpa.provenance.fingerprint import code_fingerprint
plan = judge([{config!r}], {root!r})
for run in plan.runs.values():
    code_fingerprint("fpa.training.loop", get_objective(run.objective).loss.__module__)
for bench in plan.config["benchmarks"].values():
    code_fingerprint("fpa.cli.evaluate", grader_module(bench["grader"]))
for module in ("fpa.cli.data", "fpa.cli.dataset", "fpa.cli.reference", "fpa.cli.tables", "fpa.cli.toy"):
    code_fingerprint(module)
"""

# Snakemake's CLI with its executor plugin discovery (pkgutil.iter_modules) not seeing the SLURM plugin.
WITHOUT_SLURM_PLUGIN = """
import pkgutil, runpy, sys
every_module = pkgutil.iter_modules
pkgutil.iter_modules = lambda *args: (module for module in every_module(*args)
                                      if not module.name.startswith("snakemake_executor_plugin_slurm"))
sys.argv = ["snakemake", *sys.argv[1:]]
runpy.run_module("snakemake", run_name="__main__")
"""


def cases(project: Path) -> dict[str, list[str]]:
    paper = str(project / "config" / "paper.yaml")
    plan = ["-s", str(project / "Snakefile"), "-n", "--cores", "1"]
    snakemake = [sys.executable, "-m", "snakemake", *plan]
    return {
        "paper plan": [*snakemake, "--configfile", paper],
        "paper plan, no SLURM plugin": [sys.executable, "-c", WITHOUT_SLURM_PLUGIN, *plan, "--configfile", paper],
        "ci plan": [*snakemake, "--configfile", str(project / ".test" / "config_ci" / "config.yaml")],
        "parse only": [sys.executable, "-c", PARSE_ONLY.format(config=paper, root=str(project))],
        "snakemake": [sys.executable, "-c", "import snakemake.api"],
    }


def timed(command: list[str], project: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, output) of one fresh run in an empty working directory."""
    env = {**USER_ENVIRONMENT, "PYTHONPATH": str(project / "src")}
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


def planned_jobs(output: str) -> int | None:
    for line in output.split("Job stats:")[-1].splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "total" and parts[1].isdigit():
            return int(parts[1])
    return None


def measure(checkouts: dict[str, Path], rounds: int) -> dict:
    """Every case of every checkout once per round, back to back (rotated start): paired rounds."""
    commands = {(checkout, name): command for checkout, project in checkouts.items()
                for name, command in cases(project).items()}
    keys = list(commands)
    runs: dict[tuple, list] = {key: [] for key in keys}
    jobs: dict[tuple, int | None] = {}
    for checkout, name in keys:  # warm the page and bytecode caches
        timed(commands[checkout, name], checkouts[checkout])
    for round_ in range(rounds):
        for key in rotated(keys, round_):
            wall, cpu, output = timed(commands[key], checkouts[key[0]])
            runs[key].append((wall, cpu))
            if "-s" in commands[key]:
                jobs[key] = planned_jobs(output)
    results: dict[str, dict] = {}
    for (checkout, name), timings in runs.items():
        walls, cpus = [w for w, _ in timings], [c for _, c in timings]
        results.setdefault(checkout, {})[name] = {"jobs": jobs.get((checkout, name)), "wall_s": walls, "cpu_s": cpus,
                                                  "wall_median_s": statistics.median(walls),
                                                  "cpu_median_s": statistics.median(cpus)}
    return results


def paired_ratios(results: dict[str, dict]) -> dict[str, dict]:
    """Per case, current / baseline of each round's wall and CPU time (the two ran back to back)."""
    ratios = {}
    for name, current in results["current"].items():
        baseline = results["baseline"][name]
        ratios[name] = {unit: paired_ratio(current[unit], baseline[unit]) for unit in ("wall_s", "cpu_s")}
    return ratios


def markdown(record: dict) -> str:
    """The results file as Markdown: per checkout and case, medians and ranges over the rounds."""
    machine = record["machine"]
    lines = [f"{record['rounds']} rounds, each case in a fresh process, cases interleaved; {cores_text(record, machine.get('cpus'))}, "
             f"1-min load average {machine['loadavg_before'][0]:.1f} → {machine['loadavg_after'][0]:.1f}.", "",
             "| checkout | case | jobs | wall s, median [min–max] | CPU s, median [min–max] |",
             "|---|---|---:|---|---|"]
    for checkout in sorted(record["results"], key=lambda name: name != "current"):
        for name, row in record["results"][checkout].items():
            jobs = "" if row["jobs"] is None else f"{row['jobs']:,}"
            lines.append(f"| {checkout} | {name} | {jobs} | {spread_text(spread(row['wall_s']), 2)} | "
                         f"{spread_text(spread(row['cpu_s']), 2)} |")
    if record.get("ratios"):
        commits = record["commits"]
        lines += ["", f"Paired per round, current ({commits['current'][:7]}) / baseline ({commits['baseline'][:7]}):",
                  "",
                  "| case | wall, median [min–max] | CPU, median [min–max] |", "|---|---|---|"]
        for name, ratio in record["ratios"].items():
            lines.append(f"| {name} | {spread_text(ratio['wall_s'], 2)} | {spread_text(ratio['cpu_s'], 2)} |")
    return "\n".join(lines + [""] + [f"- {verdict}" for verdict in record["target"].splitlines()])


def markdown_headline(record: dict) -> str:
    """The index's line: the paper plan's median wall time against its target."""
    paper = record["results"]["current"]["paper plan"]
    return f"`snakemake -n` of the paper grid: {paper['wall_median_s']:.2f} s wall, median (target < {TARGET_S:.0f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--baseline", default=None, help="a git revision to time the same way (git archive)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as baseline_dir:
        checkouts = {"current": ROOT}
        if args.baseline:
            checkouts["baseline"] = Path(baseline_dir)
            export(ROOT, args.baseline, checkouts["baseline"])
        results = measure(checkouts, args.rounds)
    load_after = os.getloadavg()
    # wall is what the target is about; CPU time is what a shared machine's load does not inflate
    verdict = "\n".join(
        f"[{'PASS' if row[key] < TARGET_S else 'FAIL'}] {name} median {unit} {row[key]:.2f} s < {TARGET_S} s"
        for name, row in results["current"].items() if name.startswith("paper plan")
        for unit, key in (("wall", "wall_median_s"), ("CPU", "cpu_median_s")))
    from fpa.io import write_json
    from fpa.provenance.record import project_version

    record = {
        "results": results, "ratios": paired_ratios(results) if args.baseline else None, "target": verdict,
        "rounds": args.rounds, "cpu": machine(),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "loadavg_before": load_before, "loadavg_after": load_after},
        "commits": {"current": commit_of(ROOT), **({"baseline": commit_of(ROOT, args.baseline)} if args.baseline
                                                   else {})},
        "worktree_clean": not project_version()["dirty"],
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    write_json(args.out, record)
    print(markdown(record))


if __name__ == "__main__":
    main()
