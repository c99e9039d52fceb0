"""The default run's CPU seconds per stage on a quiet host and beside two busy CPU jobs, under each
commit's OpenMP wait policy (issue 58: ``bfd9fe1`` has none of its own; later commits set one in every
fpa command, ``fpa.cli.entry.JOB_ENVIRONMENT``).

    python benchmarks/default_run/wait_policy.py --commits bfd9fe1 HEAD --rounds 2 --keep /tmp/wait
        # fresh clones, one run after the other; writes results/wait_policy.json
    python benchmarks/default_run/wait_policy.py --commits bfd9fe1 HEAD --rounds 2 --record /tmp/wait   # read them again

A round runs the default run once per condition and commit (the commits in turn forward and backward from
round to round, so that a drift of the host's speed does not fall on one commit), each run one of
``default_run.py`` (a fresh clone of the commit, ``snakemake --cores all``, its jobs running the clone's
package), quiet or beside ``BUSY_JOBS`` single-threaded busy loops on the same cores, kept in
``DIR/round<k>/<busy jobs>busy-<commit>``. With ``--keep`` a run already finished there is read, not run
again, and ``--record`` reads the runs that finished (the record names those that did not). The record keeps
every run (times, loads, tables, cost by stage) and whether their tables are the same to the last digit. A
stage's CPU seconds are those its fpa commands reported (``cost_by_stage.md``), summed over the stage's jobs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from default_run.default_run import (BUSY_JOBS, CONDITIONS, LOG, RESULTS, minutes,  # noqa: E402
                                     own_job_environment, read_round, run_round, stage_totals)
from shared.checkouts import commit_of, machine  # noqa: E402

from fpa.io import write_json

ROOT = Path(__file__).resolve().parents[2]


def directory_of(parent: Path, round_: int, condition: str, commit: str) -> Path:
    return parent / f"round{round_}" / f"{CONDITIONS[condition]}busy-{commit[:7]}"


def schedule(commits: list[str], rounds: int) -> list[tuple[int, str, str]]:
    """(round, condition, commit) in the order they run: each round every condition, the commits forward
    in odd rounds and backward in even ones."""
    return [(round_, condition, commit) for round_ in range(1, rounds + 1) for condition in CONDITIONS
            for commit in (commits if round_ % 2 else commits[::-1])]


def finished(directory: Path) -> bool:
    return (directory / LOG).is_file() and "exit: 0" in (directory / LOG).read_text()


def record(parent: Path, commits: list[str], rounds: int) -> dict:
    """The runs under ``parent`` that finished; each one that did not is named in ``not_run``."""
    runs, not_run = [], []
    for round_, condition, commit in schedule(commits, rounds):
        directory = directory_of(parent, round_, condition, commit)
        if not finished(directory):
            not_run.append(f"round {round_}, {condition}, {commit[:7]}")
            continue
        runs.append({"round": round_, "condition": condition, **read_round(directory)})
        if runs[-1]["commit"] != commit:
            raise SystemExit(f"{directory}: expected a run of {commit}, found {runs[-1]['commit']}")
    return {"benchmark": "wait_policy", "cpu": machine(), "busy_jobs": BUSY_JOBS, "commits": commits,
            "rounds": runs, "not_run": not_run, "identical_tables": len({r["table"] for r in runs}) == 1}


def markdown(record: dict) -> str:
    """Per condition and commit, each run's CPU seconds per stage, in the order of its rounds (``a · b``),
    with its wall time and load: no ratio, since a run's load (other work on the machine) is not the
    benchmark's to choose, and two runs of one condition can differ in it."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for run in sorted(record["rounds"], key=lambda run: run["round"]):
        cells.setdefault((run["condition"], run["commit"]), []).append(run)
    columns = [(condition, commit) for condition in CONDITIONS for commit in record["commits"]
               if (condition, commit) in cells]

    def row(name: str, value) -> str:
        return f"| {name} | " + " | ".join(" · ".join(value(run) for run in cells[column])
                                          for column in columns) + " |"

    stages = stage_totals(record["rounds"][0]["cost_by_stage"])
    lines = [f"The default run, a fresh clone per run, on {record['cpu']['cores']} cores of an "
             f"{record['cpu']['model']} (`python benchmarks/default_run/wait_policy.py`); CPU seconds per stage, "
             "one number per run in the order of its rounds:",
             "", "| stage | " + " | ".join(f"{condition}, `{commit[:7]}`" for condition, commit in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    lines += [row(stage, lambda run, stage=stage: f"{stage_totals(run['cost_by_stage'])[stage]['cpu_s']:.0f}")
              for stage in stages]
    lines += [row("**all, Snakemake and every job**", lambda run: f"{run['cpu_s']:.0f}"),
              row("wall", lambda run: minutes(run["wall_s"])),
              row("1-min load before → after", lambda run: f"{run['load_before']:.2f} → {run['load_after']:.2f}"), ""]
    if record["not_run"]:
        lines += [f"Not run: {'; '.join(record['not_run'])}.", ""]
    same = (f"The {len(record['rounds'])} runs gave the same `results/tables/toy.md` to the last digit."
            if record["identical_tables"] else "**The runs' tables differ.**")
    return "\n".join([*lines, same]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", nargs="+", default=["bfd9fe1", "HEAD"],
                        help="the first and the last are compared (default: bfd9fe1 HEAD)")
    parser.add_argument("--rounds", type=int, default=2, help="runs per condition and commit (default 2)")
    parser.add_argument("--keep", type=Path, help="run the rounds in DIR/round<k>/<condition>-<commit> and keep them")
    parser.add_argument("--record", type=Path, help="read the rounds of an earlier --keep DIR instead")
    parser.add_argument("--out", type=Path, default=RESULTS / "wait_policy.json")
    args = parser.parse_args(argv)
    commits = [commit_of(ROOT, commit) for commit in args.commits]
    parent = args.record or args.keep or Path(tempfile.mkdtemp(prefix="wait-policy."))
    if not args.record:
        own_job_environment()
        for round_, condition, commit in schedule(commits, args.rounds):
            directory = directory_of(parent, round_, condition, commit)
            if not finished(directory):
                directory.parent.mkdir(parents=True, exist_ok=True)
                run_round(directory, [], commit, CONDITIONS[condition])
    result = record(parent, commits, args.rounds)
    write_json(args.out, result)
    print(markdown(result))
    return 0 if result["identical_tables"] else 1


if __name__ == "__main__":
    sys.exit(main())
