"""The README's two test commands, timed from a fresh clone: wall and CPU seconds, what passed, and
the 20 slowest tests of each (``--durations=20``). Targets (issue 41): the fast tier within 5 min,
the full suite within 15, on 2 cores.

    python benchmarks/suite/tiers.py                    # both tiers from a clone of HEAD
    python benchmarks/suite/tiers.py --tiers fast       # one of them
    python benchmarks/suite/tiers.py --from-log LOG --tier fast --commit SHA --command "..."
                                                        # a run made by hand (e.g. before a change), parsed alike

Run it on a quiet machine: the tiers use both cores. The commands are read from the README (the
ones ``tests/test_test_commands.py`` holds to docs/testing.md and .ci/run) and run in this
interpreter's environment with the clone's ``src`` first on the path; the environment variables the
suite needs (``CI``, ``FPA_DATA_MIRROR``, ``FPA_VLLM_PYTHON``) are this shell's.
"""

from __future__ import annotations

import argparse
import json
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


def run_tier(clone: Path, command: str, log: Path | None = None) -> dict:
    argv = [sys.executable, *shlex.split(command)[1:], "--durations=20", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(clone / "src"),
                                                                       os.environ.get("PYTHONPATH")]))}
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    load = os.getloadavg()[0]
    done = subprocess.run(argv, cwd=clone, env=env, capture_output=True, text=True)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if log is not None:
        log.write_text(done.stdout + done.stderr)
    return {"command": command, "returncode": done.returncode, "wall_s": round(wall, 1), "cpu_s": round(cpu, 1),
            "load_before": round(load, 2), **parse_run(done.stdout + done.stderr)}


def machine() -> dict:
    sys.path.insert(0, str(ROOT / "src"))
    from fpa.provenance.cpu import cpu_facts

    facts = cpu_facts()
    return {"vendor": facts.get("vendor"), "model": facts.get("model"), "cores": os.cpu_count()}


def measure(tiers: list[str], logs: Path | None = None) -> dict:
    commands = readme_commands(ROOT / "README.md")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    runs = {}
    with tempfile.TemporaryDirectory() as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        if (ROOT.parent / "shared").is_dir():  # ../shared beside the clone, as CI has it (the paper, the mirror)
            (Path(scratch) / "shared").symlink_to(ROOT.parent / "shared")
        for tier in tiers:
            runs[tier] = run_tier(clone, commands[tier], logs / f"{tier}.log" if logs else None)
            print(f"{tier}: {runs[tier]['wall_s']} s wall, {runs[tier]['outcome']}", flush=True)
    return {"benchmark": "tiers", "commit": commit, "cpu": machine(), "runs": runs}


def markdown(record: dict) -> str:
    cpu = record["cpu"]
    how = ("from a fresh clone (`python benchmarks/suite/tiers.py`)" if record.get("from_log") is None
           else f"a run by hand, its output parsed (`--from-log {record['from_log']}`)")
    lines = [f"**{cpu['model']}** ({cpu['cores']} cores), commit `{record['commit'][:7]}`, {how}", "",
             "| tier | command | wall | target | CPU s | load before | outcome |", "|---|---|---|---|---|---|---|"]
    for tier, run in record["runs"].items():
        within = "within" if run["wall_s"] <= TARGET_S[tier] else "**over**"
        cpu_s = "" if run["cpu_s"] is None else f"{run['cpu_s']:.0f}"
        lines.append(f"| {tier} | `{run['command']}` | {run['wall_s']:.0f} s ({run['wall_s'] / 60:.1f} min) | "
                     f"{TARGET_S[tier] // 60} min: {within} | {cpu_s} | {run['load_before']} | {run['outcome']} |")
    for tier, run in record["runs"].items():
        lines += ["", f"The 20 slowest test phases of the {tier} tier:", "", "| s | phase | test |", "|---|---|---|"]
        lines += [f"| {row['seconds']:.1f} | {row['phase']} | `{row['test']}` |" for row in run["slowest"]]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: each tier's wall time against its target."""
    return "; ".join(f"{tier}: {run['wall_s'] / 60:.1f} min (target {TARGET_S[tier] // 60})"
                     for tier, run in record["runs"].items()) + f" ({record['cpu']['model']}, `{record['commit'][:7]}`)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", nargs="+", choices=sorted(TARGET_S), default=["fast", "full"])
    parser.add_argument("--from-log", type=Path, help="record a run made by hand from its pytest output")
    parser.add_argument("--tier", choices=sorted(TARGET_S), help="with --from-log: the tier it ran")
    parser.add_argument("--commit", help="with --from-log: the commit it ran")
    parser.add_argument("--command", help="with --from-log: the command it ran")
    parser.add_argument("--wall", type=float, help="with --from-log: its wall seconds (else pytest's own)")
    parser.add_argument("--out", type=Path, default=RESULTS / "tiers.json")
    parser.add_argument("--logs", type=Path, help="a directory for each tier's whole pytest output")
    args = parser.parse_args(argv)
    if args.from_log:
        if not (args.tier and args.commit and args.command):
            parser.error("--from-log needs --tier, --commit and --command")
        output = args.from_log.read_text()
        parsed = parse_run(output)
        wall = args.wall if args.wall is not None else float(OUTCOME.findall(output)[-1][1])
        record = {"benchmark": "tiers", "commit": args.commit, "cpu": machine(), "from_log": args.from_log.name,
                  "runs": {args.tier: {"command": args.command, "returncode": None, "wall_s": wall,
                                       "cpu_s": None, "load_before": None, **parsed}}}
    else:
        if args.logs:
            args.logs.mkdir(parents=True, exist_ok=True)
        record = measure(args.tiers, args.logs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
