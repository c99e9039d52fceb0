"""What MKL's vendor-neutral branch costs: the toy base model's SFT job under each MKL branch, paired.

    python benchmarks/numerics/mkl_branch_cost.py      # writes benchmarks/numerics/results/mkl_branch_cost_<vendor>.json
    python benchmarks/numerics/mkl_branch_cost.py --logs DIR   # read the runs of an earlier call (its --keep DIR)
    python benchmarks/numerics/mkl_branch_cost.py --steps 100  # the SFT's first 100 steps only (a busy machine)

The SFT job (``python -m fpa toy-model``, the default preset, 2 threads, as the workflow runs it) is
the default run's largest job and its heaviest in matmuls. Both branches run at once, each timed
by ``/usr/bin/time``, so the load of a shared machine falls on both alike; the SFT loop's CPU
seconds, all threads (the job's ``metrics.json``; the process's, imports included, are kept too)
are the measure, with idle OpenMP threads asleep (``OMP_WAIT_POLICY=PASSIVE``; spinning threads
would bill another job's time slices as work), and wall seconds depend on that load. The record keeps each run's weights' sha256: the
workflow's branch must give the weights of the default-run record of the same CPU vendor.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from default_run import default_run  # noqa: E402
from default_run.default_run import BASE_MODEL_STAGE, TARGET_S, minutes, stage_cpu_s  # noqa: E402
from numerics.numerics import RESULTS, setting_env  # noqa: E402

from fpa.io import sha256_path, write_json  # noqa: E402
from fpa.provenance.cpu import cpu_facts, vendor_name  # noqa: E402

BRANCHES = ("AVX2,STRICT", "COMPATIBLE")
SFT_CONFIG = {"chat_template": False, "params": {}, "prompt_template": "Q: {problem}\nA:", "revision": "main",
              "source": "toy", "toy": {"preset": "default"}, "training": {}}
TIMES = re.compile(r"^WALL (?P<wall>[\d.]+) CPU (?P<user>[\d.]+)\+(?P<sys>[\d.]+)", re.M)


def _name(branch: str) -> str:
    return branch.replace(",", "-")


def run_pair(directory: Path, steps: int | None) -> None:
    """Both branches' SFT jobs at once (``steps`` of it, None: all), each into ``directory/<branch>``,
    its log beside it."""
    config = {**SFT_CONFIG, "toy": {**SFT_CONFIG["toy"], **({"steps": steps, "log_every": steps} if steps else {})}}
    running = []
    for branch in BRANCHES:
        command = ["/usr/bin/time", "-f", "WALL %e CPU %U+%S", sys.executable, "-m", "fpa", "toy-model",
                   "--config-json", json.dumps(config), "--code", "mkl_branch_cost", "--threads", "2",
                   "--out", str(directory / _name(branch))]
        log = open(directory / f"{_name(branch)}.log", "w")
        running.append((branch, log, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                                      env=setting_env(branch))))
    for branch, log, process in running:
        if process.wait():
            raise SystemExit(f"{log.name}: the SFT under MKL_CBWR={branch} exited {process.returncode}")
        log.close()


def read_pair(directory: Path) -> dict:
    """The record of the runs in ``directory``: each branch's times and weights, the SFT's steps."""
    runs = {}
    for branch in BRANCHES:
        log = directory / f"{_name(branch)}.log"
        times = TIMES.search(log.read_text())
        if times is None:
            raise SystemExit(f"{log}: expected /usr/bin/time's line 'WALL s CPU user+sys', found none")
        weights = directory / _name(branch) / "model.safetensors"
        metrics = json.loads((weights.parent / "metrics.json").read_text())
        runs[branch] = {"wall_s": float(times["wall"]), "cpu_s": metrics["cpu_seconds"],
                        "process_cpu_s": round(float(times["user"]) + float(times["sys"]), 2),
                        "weights_sha256": sha256_path(weights), "steps": metrics["config"]["steps"]}
    facts = cpu_facts()
    return {"benchmark": "mkl_branch_cost", "cpu": {key: facts[key] for key in ("vendor", "model", "flags")},
            "job": "toy base model's SFT (python -m fpa toy-model, default preset, 2 threads)", "runs": runs}


def markdown(record: dict) -> str:
    runs, cpu = record["runs"], record["cpu"]
    base = runs[BRANCHES[0]]["cpu_s"]
    lines = [f"The {record['job']} on an {cpu['model']} ({cpu['vendor']}), both branches at once "
             "(`python benchmarks/numerics/mkl_branch_cost.py`):", "",
             "| MKL_CBWR | SFT steps | SFT loop, CPU s | × the pin's | process, CPU s | wall s (shared machine) | "
             "weights sha256 |", "|---|---:|---:|---:|---:|---:|---|"]
    lines += [f"| `{branch}` | {run['steps']} | {run['cpu_s']:.1f} | {run['cpu_s'] / base:.2f} | "
              f"{run['process_cpu_s']:.1f} | {run['wall_s']:.0f} | `{run['weights_sha256'][:12]}…` |"
              for branch, run in runs.items()]
    return "\n".join([*lines, *_whole_run(record)]) + "\n"


def _whole_run(record: dict) -> list[str]:
    """What the SFT's extra CPU seconds are over the whole default run of the same vendor's record."""
    path = default_run.RESULTS / f"default_run_{vendor_name(record['cpu']['vendor'])}.json"
    if not path.is_file():
        return []
    run = json.loads(path.read_text())["rounds"][0]
    sft = stage_cpu_s(run["cost_by_stage"], BASE_MODEL_STAGE)
    extra = sft * (record["runs"][BRANCHES[1]]["cpu_s"] / record["runs"][BRANCHES[0]]["cpu_s"] - 1)
    wall = run["wall_s"] * (run["cpu_s"] + extra) / run["cpu_s"]  # at the round's CPU utilisation
    return ["", f"In `{path.name}` this job is {sft:.0f} of the run's {run['cpu_s']:.0f} CPU s; at the ratio above "
            f"`{BRANCHES[1]}` adds {extra:.0f} CPU s ({extra / run['cpu_s']:+.0%}) to the whole run through this job "
            f"alone (the other jobs' matmuls would add more): its {minutes(run['wall_s'])} would be at least "
            f"{minutes(wall)}, against the target of {minutes(TARGET_S)}."]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", type=Path, help="run in DIR and keep the models and logs (else a temporary dir)")
    parser.add_argument("--logs", type=Path, help="read the runs an earlier call left in DIR instead of running")
    parser.add_argument("--steps", type=int, help="run this many SFT steps only (default: the preset's)")
    parser.add_argument("--out", type=Path, help="default: benchmarks/numerics/results/mkl_branch_cost_<vendor>.json")
    args = parser.parse_args(argv)
    directory = args.logs or args.keep or Path(tempfile.mkdtemp(prefix="mkl-branch-cost."))
    if args.logs is None:
        directory.mkdir(parents=True, exist_ok=True)
        run_pair(directory, args.steps)
    record = read_pair(directory)
    write_json(args.out or RESULTS / f"mkl_branch_cost_{vendor_name(record['cpu']['vendor'])}.json", record)
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
