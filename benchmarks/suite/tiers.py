"""The README's two test commands, timed from a fresh clone: wall and CPU seconds, what passed, and
the 20 slowest tests of each (``--durations=20``). Targets (issue 41): the fast tier within 5 min,
the full suite within 15, on 2 cores.

    python benchmarks/suite/tiers.py                    # both tiers from a clone of HEAD
    python benchmarks/suite/tiers.py --tiers fast       # one of them
    python benchmarks/suite/tiers.py --rev f405d6a --tiers fast --out /tmp/tiers_f405d6a.json
                                                        # an earlier commit, with its own README's command
    python benchmarks/suite/tiers.py --tiers full --against f405d6a --rounds 2  # writes results/tiers_rounds.json
                                                        # HEAD, then the earlier commit, twice: the ratio per round

Run it on a quiet machine: the tiers use both cores; to compare two commits, run them back to back
in one session. The commands are read from the measured commit's README (today's are the ones
``tests/test_test_commands.py`` holds to docs/testing.md and .ci/run) and run in this
interpreter's environment with the clone's ``src`` first on the path; the environment variables the
suite needs (``CI``, ``FPA_DATA_MIRROR``, ``FPA_VLLM_PYTHON``) are this shell's.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]  # fpa, and shared/ of the benchmarks

from fpa.io import write_json  # noqa: E402
from shared.checkouts import machine  # noqa: E402
from shared.rounds import spread, spread_text  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
TARGET_S = {"fast": 300, "full": 900}
COMMAND = re.compile(r"python -m pytest[^`\n&|;]*")
DURATION = re.compile(r"^\s*(\d+\.\d+)s (setup|call|teardown)\s+(\S+)", re.M)
OUTCOME = re.compile(r"^=*\s*(\d+ (?:passed|failed|error).*?) in ([\d.]+)s", re.M)


def readme_commands(readme: Path) -> dict[str, str]:
    """The fast and the full command, in the README's order."""
    fast, full = (" ".join(command.split()) for command in COMMAND.findall(readme.read_text()))
    return {"fast": fast, "full": full}


def parse_run(output: str) -> dict:
    """The counts line and the 20 slowest test phases of a pytest run's output."""
    outcome = OUTCOME.findall(output)
    slowest = [{"seconds": float(seconds), "phase": phase, "test": test.split("@")[0]}
               for seconds, phase, test in DURATION.findall(output)][:20]
    return {"outcome": outcome[-1][0] if outcome else None, "slowest": slowest}


def cpu_ticks() -> tuple[int, int] | None:
    """The machine's CPU time so far, (all, idle) in clock ticks over every core (``/proc/stat``; idle
    counts I/O wait); None where there is no such file."""
    try:
        with open("/proc/stat") as handle:
            ticks = [int(field) for field in handle.readline().split()[1:]]
    except OSError:
        return None
    return sum(ticks), ticks[3] + ticks[4]


def run_tier(clone: Path, command: str, log: Path | None = None) -> dict:
    """One tier's run. ``cpu_s`` counts the processes the run waited for (the SLURM daemons' jobs and
    the sandboxes' are not its children); ``machine_busy``, the share of all cores' time that was not
    idle over the run, counts everything, so 1 - busy is the time the cores waited."""
    argv = [sys.executable, *shlex.split(command)[1:], "--durations=20", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(clone / "src"),
                                                                       os.environ.get("PYTHONPATH")]))}
    before, ticks, started = resource.getrusage(resource.RUSAGE_CHILDREN), cpu_ticks(), time.perf_counter()
    load = os.getloadavg()[0]
    done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    busy = None
    if ticks is not None:
        (total, idle), (total_before, idle_before) = cpu_ticks(), ticks
        busy = round(1 - (idle - idle_before) / (total - total_before), 3)
    if log is not None:
        log.write_text(done.stdout + done.stderr)
    return {"command": command, "returncode": done.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "machine_busy": busy, "load_before": round(load, 2), **parse_run(done.stdout + done.stderr)}


def measure(tiers: list[str], rev: str, logs: Path | None = None) -> dict:
    """``tiers`` of commit ``rev``, each with the command its own README gives, from a fresh clone."""
    commit = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "-q", commit], cwd=clone, check=True)
        if (ROOT.parent / "shared").is_dir():  # ../shared beside the clone, as CI has it (the paper, the mirror)
            (Path(scratch) / "shared").symlink_to(ROOT.parent / "shared")
        commands = readme_commands(clone / "README.md")
        for tier in tiers:
            runs[tier] = run_tier(clone, commands[tier], logs / f"{tier}-{commit[:7]}.log" if logs else None)
            print(f"{commit[:7]} {tier}: {runs[tier]['wall_s']} s wall, {runs[tier]['outcome']}", flush=True)
    return {"benchmark": "tiers", "commit": commit, "cpu": machine(), "runs": runs}


def rounds_record(rounds: list[tuple[dict, dict]]) -> dict:
    """Paired rounds of one tier: each round a record of the commit and one of the commit it is compared
    against, run one after the other; the wall-time ratio (commit / against) per round and its spread."""
    (first, against), tier = rounds[0], next(iter(rounds[0][0]["runs"]))
    ratios = [new["runs"][tier]["wall_s"] / old["runs"][tier]["wall_s"] for new, old in rounds]
    return {"benchmark": "tiers", "tier": tier, "commit": first["commit"], "against": against["commit"],
            "cpu": first["cpu"], "rounds": [{"commit": new["runs"][tier], "against": old["runs"][tier]}
                                            for new, old in rounds],
            "wall_ratio": spread(ratios)}


def _busy(run: dict) -> str:
    """A run's machine busy share; a dash for the records written before it was measured."""
    return "—" if run.get("machine_busy") is None else f"{run['machine_busy']:.0%}"


def markdown(record: dict) -> str:
    if "rounds" in record:
        return markdown_rounds(record)
    cpu = record["cpu"]
    lines = [f"**{cpu['model']}** ({cpu['cores']} cores), commit `{record['commit'][:7]}`, from a fresh clone "
             f"(`python benchmarks/suite/tiers.py`)", "",
             "| tier | command | wall | target | CPU s | machine busy | load before | outcome |",
             "|---|---|---|---|---|---|---|---|"]
    for tier, run in record["runs"].items():
        within = "within" if run["wall_s"] <= TARGET_S[tier] else "**over**"
        lines.append(f"| {tier} | `{run['command']}` | {run['wall_s']:.0f} s ({run['wall_s'] / 60:.1f} min) | "
                     f"{TARGET_S[tier] // 60} min: {within} | {run['cpu_s']:.0f} | {_busy(run)} | "
                     f"{run['load_before']} | {run['outcome']} |")
    for tier, run in record["runs"].items():
        lines += ["", f"The 20 slowest test phases of the {tier} tier:", "", "| s | phase | test |", "|---|---|---|"]
        lines += [f"| {row['seconds']:.1f} | {row['phase']} | `{row['test']}` |" for row in run["slowest"]]
    return "\n".join(lines) + "\n"


def markdown_rounds(record: dict) -> str:
    cpu, tier, ratio = record["cpu"], record["tier"], record["wall_ratio"]

    def cells(run: dict) -> str:
        return f"{run['wall_s']:.0f} s ({run['wall_s'] / 60:.1f} min) | {_busy(run)} | {run['outcome']}"

    lines = [f"**{cpu['model']}** ({cpu['cores']} cores), the {tier} tier of `{record['commit'][:7]}` and of "
             f"`{record['against'][:7]}`, one after the other in each round, each from a fresh clone "
             f"(`python benchmarks/suite/tiers.py`)", "",
             f"| round | `{record['commit'][:7]}` wall | machine busy | outcome | `{record['against'][:7]}` wall | "
             f"machine busy | outcome | ratio |", "|---|---|---|---|---|---|---|---|"]
    for index, pair in enumerate(record["rounds"], 1):
        lines.append(f"| {index} | {cells(pair['commit'])} | {cells(pair['against'])} | "
                     f"{pair['commit']['wall_s'] / pair['against']['wall_s']:.3f} |")
    lines += ["", f"Wall time `{record['commit'][:7]}` / `{record['against'][:7]}`: median {spread_text(ratio)} "
                  f"over {ratio['n']} rounds."]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: each tier's wall time against its target."""
    return "; ".join(f"{tier}: {run['wall_s'] / 60:.1f} min (target {TARGET_S[tier] // 60})"
                     for tier, run in record["runs"].items()) + f" ({record['cpu']['model']}, `{record['commit'][:7]}`)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", nargs="+", choices=sorted(TARGET_S), default=["fast", "full"])
    parser.add_argument("--rev", default="HEAD", help="the commit to measure (default HEAD)")
    parser.add_argument("--out", type=Path, help="default results/tiers.json, with --against results/tiers_rounds.json")
    parser.add_argument("--logs", type=Path, help="a directory for each tier's whole pytest output")
    parser.add_argument("--against", help="an earlier commit: each round runs --rev's tier, then this one's")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of --against's pairs (default 1)")
    args = parser.parse_args(argv)
    if args.against and len(args.tiers) != 1:
        parser.error(f"--against compares one tier; got --tiers {' '.join(args.tiers)}")
    if args.rounds < 1:
        parser.error(f"--rounds: expected an integer >= 1, got {args.rounds}")
    if args.logs:
        args.logs.mkdir(parents=True, exist_ok=True)
    if args.against:
        record = rounds_record([(measure(args.tiers, args.rev, args.logs), measure(args.tiers, args.against, args.logs))
                                for _ in range(args.rounds)])
    else:
        record = measure(args.tiers, args.rev, args.logs)
    write_json(args.out or RESULTS / ("tiers_rounds.json" if args.against else "tiers.json"), record)
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
