"""The toy base model's SFT under each commit's OpenMP wait policy, quiet and beside busy CPU jobs, in
paired rounds (issue 58): its wall and CPU seconds, and whether every side trained the same weights.

    python benchmarks/default_run/wait_policy_sft.py --commits bfd9fe1 225140b HEAD --rounds 3
        # writes results/wait_policy_sft.json: per condition (quiet, beside 2 busy jobs), each round runs
        # every commit once, in rotated order

The SFT is the default run's rule ``toy_base_model`` (config/config.yaml's toy model and CPU-kernel pins,
2 threads) at ``--steps`` steps, each commit's package (``git archive``) run as ``python -m fpa
toy-model`` in a fresh process, so each side sets its own environment as its jobs do; this shell's own
setting of it is refused. A busy job is a single-threaded pure-Python loop on the same cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from default_run.default_run import BUSY_JOB, CONDITIONS, RESULTS, own_job_environment  # noqa: E402
from shared.checkouts import USER_ENVIRONMENT, commit_of, export, machine  # noqa: E402
from shared.rounds import paired_ratio, rotated, spread, spread_text  # noqa: E402

from fpa.io import write_json
from fpa.numerics import portable_env
from fpa.planning.judge import judge

ROOT = Path(__file__).resolve().parents[2]
THREADS = 2  # the rule's threads in the default run (--cores all on 2 cores)


def sft_config(steps: int) -> str:
    """The default run's toy model config (``config/config.yaml``), its SFT cut to ``steps`` steps."""
    model = judge([ROOT / "config" / "config.yaml"]).config["models"]["toy"]
    return json.dumps({**model, "toy": {**model["toy"], "steps": steps}})


def train(source: Path, config: str, out: Path) -> dict:
    """One SFT in a fresh process running ``source``'s package: wall and CPU seconds, and the weights' digest."""
    environment = {**USER_ENVIRONMENT, **portable_env(), "PYTHONPATH": str(source / "src")}
    started, usage = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "fpa", "toy-model", "--config-json", config, "--threads", str(THREADS),
                    "--out", str(out)], env=environment, check=True, capture_output=True)
    wall, done = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = done.ru_utime - usage.ru_utime + done.ru_stime - usage.ru_stime
    weights = hashlib.sha256(b"".join(path.read_bytes() for path in sorted(out.rglob("*.safetensors"))))
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "weights": weights.hexdigest()[:16],
            "load": round(os.getloadavg()[0], 2)}


def measure(commits: list[str], rounds: int, steps: int, work: Path) -> dict:
    sources = {}
    for commit in commits:
        sources[commit] = work / commit[:12]
        sources[commit].mkdir()
        export(ROOT, commit, sources[commit])
    config, conditions = sft_config(steps), {}
    for condition, busy_jobs in CONDITIONS.items():
        busy = [subprocess.Popen(BUSY_JOB) for _ in range(busy_jobs)]
        try:
            conditions[condition] = [{commit: train(sources[commit], config, work / f"{condition}-{index}-{commit}")
                                      for commit in rotated(commits, index)} for index in range(rounds)]
        finally:
            for job in busy:
                job.kill()
    return {"benchmark": "wait_policy_sft", "cpu": machine(), "commits": commits, "steps": steps,
            "threads": THREADS, "conditions": conditions}


def markdown(record: dict) -> str:
    first, *others = record["commits"]
    lines = [f"The toy base model's SFT ({record['steps']} steps, {record['threads']} threads, the default run's "
             f"model and kernel pins), each round every commit once in rotated order, on {record['cpu']['cores']} "
             f"cores of an {record['cpu']['model']} (`python benchmarks/default_run/wait_policy_sft.py`); "
             f"ratios to `{first[:7]}` paired by round, median [min–max]; quiet: no busy job added (the 1-min load "
             "column says what else ran):", "",
             "| condition | commit | rounds | wall s | CPU s | wall / first | CPU / first | 1-min load |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    weights = set()
    for condition, rounds in record["conditions"].items():
        for commit in record["commits"]:
            runs = [round_[commit] for round_ in rounds]
            weights |= {run["weights"] for run in runs}
            ratio = {key: spread_text(paired_ratio([r[commit][key] for r in rounds], [r[first][key] for r in rounds]))
                     for key in ("wall_s", "cpu_s")} if commit != first else {"wall_s": "", "cpu_s": ""}
            loads = spread(run["load"] for run in runs)
            lines.append(f"| {condition} | `{commit[:7]}` | {len(runs)} | "
                         f"{spread_text(spread(run['wall_s'] for run in runs), 1)} | "
                         f"{spread_text(spread(run['cpu_s'] for run in runs), 1)} | {ratio['wall_s']} | "
                         f"{ratio['cpu_s']} | {loads['min']:.1f}–{loads['max']:.1f} |")
    same = ("Every run trained the same weights (one digest)." if len(weights) == 1
            else f"**The runs trained {len(weights)} different weights.**")
    return "\n".join([*lines, "", same]) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", nargs="+", required=True, help="the first is the one the ratios divide by")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "wait_policy_sft.json")
    args = parser.parse_args(argv)
    own_job_environment()
    commits = [commit_of(ROOT, commit) for commit in args.commits]
    with tempfile.TemporaryDirectory(prefix="wait-policy-sft.") as work:
        result = measure(commits, args.rounds, args.steps, Path(work))
    write_json(args.out, result)
    print(markdown(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
