"""The default run as a new user meets it: a fresh clone, then ``snakemake --cores all``.

    python benchmarks/default_run/default_run.py                 # 2 rounds; writes benchmarks/default_run/results/default_run_<vendor>.json
    python benchmarks/default_run/default_run.py --rounds 3 --keep /tmp/runs
    python benchmarks/default_run/default_run.py --record /tmp/run1 /tmp/run2   # runs made by --keep, read again
    python benchmarks/default_run/default_run.py --rounds 1 --config mkl_cbwr=COMPATIBLE --out /tmp/compatible.json
    python benchmarks/default_run/default_run.py --rounds 1 --commit bfd9fe1 --beside 2 --out /tmp/loaded.json
        # an earlier commit, beside two busy CPU jobs on the same cores (issue 58: a loaded host)

Each round clones the committed HEAD of this checkout into an empty directory and runs the
README's command there, timed by ``/usr/bin/time`` (wall, user + sys CPU of Snakemake and
every job, max RSS of the largest process); the environment is the one this script runs in
(the install is not timed), with Python's bytecode cache on as on a user's machine. The
record keeps each round's times and the 1-min load average before and after (other jobs on
the machine slow a round down), its ``results/tables/toy.md`` and ``cost_by_stage.md``, and
whether every round gave the same table to the last digit.
Target (issue 26): every round within 7 min 30 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.checkouts import USER_ENVIRONMENT, commit_of  # noqa: E402

from fpa.cli.entry import JOB_ENVIRONMENT
from fpa.io import read_json, write_json
from fpa.provenance.cpu import cpu_facts, vendor_name

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
TARGET_S = 450.0
TIME_FORMAT = "WALL %e CPU %U+%S MAXRSS %M KB"
TIMES = re.compile(r"^WALL (?P<wall>[\d.]+) CPU (?P<user>[\d.]+)\+(?P<sys>[\d.]+) MAXRSS (?P<rss>\d+) KB$", re.M)
LOG = "default_run.log"
BASE_MODEL_STAGE = "base model"  # the cost table's stage of the toy base model's SFT


def own_job_environment() -> None:
    """Refuse this shell's own setting of the environment every fpa job sets (``JOB_ENVIRONMENT``): it would
    stand in the jobs of every commit compared, whatever each commit's code sets."""
    mine = [name for name in JOB_ENVIRONMENT if name in os.environ]
    if mine:
        raise SystemExit(f"{', '.join(mine)} set in this shell: expected unset, so that each commit's jobs run "
                         "their own OpenMP wait policy")


# One busy CPU job of a loaded host: a pure-Python loop, single-threaded, no memory traffic.
BUSY_JOB = [sys.executable, "-c", "while True: pass"]
BUSY_JOBS = 2  # issue 58's loaded host: a run beside two other CPU jobs on 2 cores
#: the hosts the wait-policy benchmarks compare -> the busy jobs beside the measured run
CONDITIONS = {"quiet": 0, f"beside {BUSY_JOBS} busy jobs": BUSY_JOBS}


def run_round(directory: Path, config: list[str], commit: str, beside: int,
              configfiles: tuple[str, ...] = ()) -> None:
    """Clone ``commit`` into ``directory`` and run the workflow there (the default one, else Snakemake's
    ``--configfile`` ``configfiles``; its ``--config`` ``config``, if any) beside ``beside`` busy CPU
    jobs, its output in ``LOG``."""
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(directory)], check=True)
    subprocess.run(["git", "-C", str(directory), "checkout", "-q", commit], check=True)
    # the clone's jobs run the clone's package, as after a user's `pip install -e .` there
    environment = {**USER_ENVIRONMENT, "PYTHONPATH": str(directory / "src")}
    busy = [subprocess.Popen(BUSY_JOB) for _ in range(beside)]
    try:
        load = os.getloadavg()[0]
        with open(directory / LOG, "w") as log:
            command = [sys.executable, "-m", "snakemake", "--cores", "all",
                       *(["--configfile", *configfiles] if configfiles else []),
                       *(["--config", *config] if config else [])]
            log.write(f"load before: {load:.2f}\ncommand: {shlex.join(['snakemake', *command[3:]])}\n")
            log.flush()
            code = subprocess.run(["/usr/bin/time", "-f", TIME_FORMAT, *command], cwd=directory, stdout=log,
                                  stderr=subprocess.STDOUT, env=environment).returncode
            log.write(f"load after: {os.getloadavg()[0]:.2f}\nexit: {code}\n")
    finally:
        for job in busy:
            job.kill()
    if code:
        raise SystemExit(f"{directory / LOG}: snakemake exited {code}")


def round_times(directory: Path) -> dict:
    """The commit, times and loads of one finished round in ``directory`` (``run_round``'s)."""
    log = (directory / LOG).read_text()
    times = TIMES.search(log)
    if times is None or "exit: 0" not in log:
        raise SystemExit(f"{directory / LOG}: expected a finished round (its time line and 'exit: 0'), got none")
    return {
        "commit": commit_of(directory),
        "wall_s": float(times["wall"]),
        "cpu_s": round(float(times["user"]) + float(times["sys"]), 2),
        "max_rss_mb": round(int(times["rss"]) / 1024),
        "load_before": float(re.search(r"load before: ([\d.]+)", log)[1]),
        "load_after": float(re.search(r"load after: ([\d.]+)", log)[1]),
    }


def read_round(directory: Path) -> dict:
    """The record of one finished round of the default run in ``directory``."""
    tables = directory / "results" / "tables"
    return {
        **round_times(directory),
        "max_stderr_points": largest_stderr(directory / "results" / "eval"),
        "training": training_budget(directory / "results" / "train"),
        "table": (tables / "toy.md").read_text(),
        "cost_by_stage": (tables / "cost_by_stage.md").read_text(),
    }


def training_budget(trained: Path) -> dict[str, list[int]]:
    """The offline problems the runs trained on and their steps, over every run (a weaker base model
    leaves more problems with mixed samples, and so more steps)."""
    summaries = [read_json(path)["summary"] for path in trained.glob("*/*/*/checkpoint/training_state.json")]
    return {key: sorted({summary[key] for summary in summaries}) for key in ("train_problems", "steps")}


def largest_stderr(evaluations: Path) -> dict[str, float]:
    """Per benchmark, the largest standard error of Pass@1 over problems of any run, in points."""
    largest: dict[str, float] = {}
    for path in evaluations.glob("*/*/*/*.json"):
        if path.name.endswith(".prov.json"):  # the provenance sidecar beside each evaluation
            continue
        stderr = json.loads(path.read_text())["pass_at_1_stderr"] * 100
        largest[path.stem] = max(largest.get(path.stem, 0.0), stderr)
    return dict(sorted(largest.items()))


def record(rounds: list[dict], config: list[str], beside: int) -> dict:
    commits = {r["commit"] for r in rounds}
    if len(commits) != 1:
        raise SystemExit(f"expected rounds of one commit, got {sorted(commits)}")
    import torch  # noqa: F401 -- the record names the math libraries the rounds' jobs loaded

    facts = cpu_facts()
    return {"benchmark": "default_run", "commit": commits.pop(), "cpu": facts["model"], "cpus": os.cpu_count(),
            "cpu_facts": facts, "snakemake_config": config, "busy_jobs_beside": beside, "target_s": TARGET_S, "rounds": rounds,
            "identical_tables": len({r["table"] for r in rounds}) == 1}


def stage_totals(cost_by_stage: str) -> dict[str, dict[str, float]]:
    """Per stage of a ``cost_by_stage.md`` table, its jobs' wall and CPU seconds summed over its rows
    (every model, method and seed), in the table's order."""
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in cost_by_stage.splitlines()
            if line.startswith("|") and not line.startswith("|---")]
    header, *body = rows
    totals: dict[str, dict[str, float]] = {}
    for row in body:
        stage = totals.setdefault(row[header.index("stage")], {"wall_s": 0.0, "cpu_s": 0.0})
        for key in stage:
            stage[key] = round(stage[key] + float(row[header.index(key)]), 1)
    return totals


def stage_cpu_s(cost_by_stage: str, stage: str) -> float:
    """The CPU seconds of ``stage`` in a ``cost_by_stage.md`` table."""
    return stage_totals(cost_by_stage)[stage]["cpu_s"]


def _training_line(round_: dict) -> list[str]:
    """What the runs trained on."""
    budget = round_["training"]
    return [f"Every run trained on {' or '.join(map(str, budget['train_problems']))} offline problems, "
            f"{' or '.join(map(str, budget['steps']))} steps.", ""]


def _load(round_: dict) -> str:
    return f"{round_['load_before']:.2f} → {round_['load_after']:.2f}"


def _stderr_line(round_: dict) -> list[str]:
    stderr = ", ".join(f"{bench} {points:.2f}" for bench, points in round_["max_stderr_points"].items())
    return [f"Largest standard error of Pass@1 over problems of any run (points): {stderr}.", ""]


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def _clones(record: dict) -> str:
    rounds = record["rounds"]
    clones = f"{len(rounds)} fresh clone" + ("s" if len(rounds) > 1 else "")
    return (f"{clones} of commit `{record['commit'][:7]}`, `snakemake --cores all` on "
            f"{record['cpus']} cores of an {record['cpu']} (`python benchmarks/default_run/default_run.py`)")


def markdown_summary(record: dict) -> str:
    """The README's view of the record: the table a new user gets, and how long the run took."""
    rounds = record["rounds"]
    # the load beside each wall time: other jobs on the same cores stretch a round's wall time, not its table
    walls = ", ".join(f"{minutes(r['wall_s'])} (1-min load {_load(r)})" for r in rounds)
    return "\n".join([rounds[0]["table"].strip(), "", *_stderr_line(rounds[0]),
                      f"Measured on {_clones(record)}: wall time {walls}.", ""])


def markdown_headline(record: dict) -> str:
    """The index's line: each round's wall time against the target."""
    walls = ", ".join(minutes(r["wall_s"]) for r in record["rounds"])
    return f"{record['cpu']}, commit `{record['commit'][:7]}`: {walls} (target {minutes(record['target_s'])})"


def markdown(record: dict) -> str:
    rounds = record["rounds"]
    lines = [f"{_clones(record)}:", "",
             "| round | wall | CPU s (Snakemake and every job) | base model's SFT, CPU s | max RSS MB | "
             f"1-min load before → after | within {minutes(record['target_s'])} |",
             "|---:|---:|---:|---:|---:|---|---|"]
    for index, r in enumerate(rounds, 1):
        lines.append(f"| {index} | {minutes(r['wall_s'])} | {r['cpu_s']:.0f} | "
                     f"{stage_cpu_s(r['cost_by_stage'], BASE_MODEL_STAGE):.0f} | {r['max_rss_mb']} | "
                     f"{_load(r)} | "
                     f"{'yes' if r['wall_s'] <= record['target_s'] else 'no'} |")
    same = "the same table to the last digit" if record["identical_tables"] else "**different tables**"
    tables = f"Every round gave {same}; round 1's" if len(rounds) > 1 else "Its"
    lines += ["", "The base model's SFT is the same work in every round, and in every record of the same toy "
              "world (the same steps, the same weights): its CPU seconds measure the machine, and compare "
              "rounds and records taken at different hours.", "",
              f"{tables} `results/tables/toy.md`:", "",
              rounds[0]["table"].strip(), "",
              *_stderr_line(rounds[0]),
              *_training_line(rounds[0]),
              "Round 1's `results/tables/cost_by_stage.md`:", "",
              rounds[0]["cost_by_stage"].strip()]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", type=Path, help="run the rounds in DIR/round-N and keep them (else a temporary dir)")
    parser.add_argument("--record", type=Path, nargs="+", help="read these finished round directories instead")
    parser.add_argument("--config", nargs="+", default=[], metavar="KEY=VALUE",
                        help="Snakemake --config overrides of every round, e.g. mkl_cbwr=COMPATIBLE")
    parser.add_argument("--commit", default="HEAD", help="the commit of this checkout to clone (default HEAD)")
    parser.add_argument("--beside", type=int, default=0, metavar="N",
                        help="run every round beside N busy single-threaded CPU jobs (a loaded host)")
    parser.add_argument("--out", type=Path, help="default: benchmarks/default_run/results/default_run_<vendor>.json, a record per CPU vendor (each vendor's toy world is its own, docs/toy.md)")
    args = parser.parse_args(argv)
    if args.record:
        directories = args.record
    else:
        parent = args.keep or Path(tempfile.mkdtemp(prefix="default-run."))
        directories = [parent / f"round-{index}" for index in range(1, args.rounds + 1)]
        for directory in directories:
            run_round(directory, args.config, args.commit, args.beside)
    result = record([read_round(directory) for directory in directories], args.config, args.beside)
    write_json(args.out or RESULTS / f"default_run_{vendor_name(result['cpu_facts']['vendor'])}.json", result)
    print(markdown(result))
    return 0 if result["identical_tables"] and all(r["wall_s"] <= TARGET_S for r in result["rounds"]) else 1


if __name__ == "__main__":
    sys.exit(main())
