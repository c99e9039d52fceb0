"""The default run's CPU seconds per stage on a quiet host and beside two busy CPU jobs, under each
commit's OpenMP wait policy (issue 58: ``bfd9fe1`` has none of its own; later commits set one in every
fpa command, ``fpa.cli.entry.JOB_ENVIRONMENT``).

    python benchmarks/default_run/wait_policy.py --commits bfd9fe1 HEAD --keep /tmp/wait
        # a fresh clone per condition and commit, one after the other; writes results/wait_policy.json
    python benchmarks/default_run/wait_policy.py --commits bfd9fe1 HEAD --record /tmp/wait   # read them again

Each round is one round of ``default_run.py`` (a fresh clone of the commit, ``snakemake --cores all``, its
jobs running the clone's package), quiet or beside ``BUSY_JOBS`` single-threaded busy loops on the same
cores, kept in ``DIR/<busy jobs>busy-<commit>``; with ``--keep`` a round already finished there is read, not
run again, and ``--record`` reads the rounds that finished (the record names those that did not). The record keeps every round (times, loads, tables, cost by stage) and whether their tables
are the same to the last digit. A stage's CPU seconds are those its fpa commands reported
(``cost_by_stage.md``), summed over the stage's jobs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from default_run.default_run import (LOG, RESULTS, minutes, own_job_environment, read_round, run_round,  # noqa: E402
                                     stage_totals)
from shared.checkouts import commit_of, machine  # noqa: E402

from fpa.io import write_json

BUSY_JOBS = 2  # issue 58's loaded host: the default run beside two other CPU jobs on 2 cores
CONDITIONS = {"no busy jobs added": 0, f"beside {BUSY_JOBS} busy jobs": BUSY_JOBS}
ROOT = Path(__file__).resolve().parents[2]


def directory_of(parent: Path, condition: str, commit: str) -> Path:
    return parent / f"{CONDITIONS[condition]}busy-{commit[:7]}"


def finished(directory: Path) -> bool:
    return (directory / LOG).is_file() and "exit: 0" in (directory / LOG).read_text()


def record(parent: Path, commits: list[str]) -> dict:
    """The rounds under ``parent`` that finished; each one that did not is named in ``not_run``."""
    rounds, not_run = [], []
    for condition in CONDITIONS:
        for commit in commits:
            directory = directory_of(parent, condition, commit)
            if not finished(directory):
                not_run.append(f"{condition}, {commit[:7]}")
                continue
            rounds.append({"condition": condition, **read_round(directory)})
            if rounds[-1]["commit"] != commit:
                raise SystemExit(f"{directory}: expected a round of {commit}, found {rounds[-1]['commit']}")
    return {"benchmark": "wait_policy", "cpu": machine(), "busy_jobs": BUSY_JOBS, "commits": commits,
            "rounds": rounds, "not_run": not_run, "identical_tables": len({r["table"] for r in rounds}) == 1}


def markdown(record: dict) -> str:
    """Each round's CPU seconds per stage, side by side, with its load: no ratio, since a round's load (other
    work on the machine) is not the benchmark's to choose, and two rounds of one condition can differ in it."""
    rounds = record["rounds"]
    totals = [stage_totals(r["cost_by_stage"]) for r in rounds]
    lines = [f"The default run, a fresh clone per round, on {record['cpu']['cores']} cores of an "
             f"{record['cpu']['model']} (`python benchmarks/default_run/wait_policy.py`); CPU seconds per stage:",
             "", "| stage | " + " | ".join(f"{r['condition']}, `{r['commit'][:7]}`" for r in rounds) + " |",
             "|---|" + "---:|" * len(rounds)]
    for stage in totals[0]:
        lines.append(f"| {stage} | " + " | ".join(f"{total[stage]['cpu_s']:.0f}" for total in totals) + " |")
    lines += ["| **all, Snakemake and every job** | " + " | ".join(f"{r['cpu_s']:.0f}" for r in rounds) + " |",
              "| wall | " + " | ".join(minutes(r["wall_s"]) for r in rounds) + " |",
              "| 1-min load before → after | " + " | ".join(
                  f"{r['load_before']:.2f} → {r['load_after']:.2f}" for r in rounds) + " |", ""]
    if record["not_run"]:
        lines += [f"Not run: {'; '.join(record['not_run'])}.", ""]
    same = (f"The {len(rounds)} rounds gave the same `results/tables/toy.md` to the last digit."
            if record["identical_tables"] else "**The rounds' tables differ.**")
    return "\n".join([*lines, same]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", nargs="+", default=["bfd9fe1", "HEAD"],
                        help="the first and the last are compared (default: bfd9fe1 HEAD)")
    parser.add_argument("--keep", type=Path, help="run the rounds in DIR/<condition>-<commit> and keep them")
    parser.add_argument("--record", type=Path, help="read the rounds of an earlier --keep DIR instead")
    parser.add_argument("--out", type=Path, default=RESULTS / "wait_policy.json")
    args = parser.parse_args(argv)
    commits = [commit_of(ROOT, commit) for commit in args.commits]
    parent = args.record or args.keep or Path(tempfile.mkdtemp(prefix="wait-policy."))
    if not args.record:
        own_job_environment()
        for condition, busy in CONDITIONS.items():
            for commit in commits:
                if not finished(directory_of(parent, condition, commit)):
                    run_round(directory_of(parent, condition, commit), [], commit, busy)
    result = record(parent, commits)
    write_json(args.out, result)
    print(markdown(result))
    return 0 if result["identical_tables"] else 1


if __name__ == "__main__":
    sys.exit(main())
