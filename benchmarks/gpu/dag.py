"""The rehearsal's DAG on the device: config/paper-rehearsal.yaml's first model (Qwen3's family,
shrunk) run by Snakemake through its sampling, reference-cache, training and evaluation jobs with
the HF backend, each job on the device the plan gives it (``resources.<group>.gpu``: 1 on CUDA,
0 on the CPU). What each job recorded: its device, dtype, wall time and peak memory.

The device has no network and no Snakemake: ``gpu/fetch_wheels.sh`` carries Snakemake's wheels
and the two wheels the rehearsal's tokenizers are built from (``fpa.data.rehearsal_models``),
and the call carries the tiny data mirror (``--data-mirror``). Per job, from its provenance record
(``*.prov.json``: rule, config and ``usage``, whose ``device`` and ``gpu_peak_bytes`` a job that
computed on a GPU writes) and its Snakemake benchmark file (``max_rss``, the host's peak); the
dtype is the one the job's config or log names (training precision, cache dtype, HF backend).
"""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from gpu.models import ROOT

from fpa.paths import EVALUATION

REHEARSAL = ROOT / "config" / "paper-rehearsal.yaml"
#: the jobs recorded; each rule's resources are the group of its name
RULES = ("sample_offline", "cache_reference", "train", "evaluate")
BACKEND_LINE = re.compile(r"HF backend on (\w+) in (\w+)")


def rehearsal_config(work: Path, data_mirror: Path, wheels: Path, cuda: bool, tiny: bool) -> Path:
    """The rehearsal config for one model, its mirror built and the file locked against it."""
    from fpa.data.rehearsal_models import build_mirror

    config = yaml.safe_load(REHEARSAL.read_text())
    model = next(iter(config["models"]))
    config["models"] = {model: config["models"][model]}
    offline = {name: method for name, method in config["methods"].items() if "online" not in method}
    config["methods"] = {"offrl": offline["offrl"]} if tiny else offline  # tiny: one run, Off-RL
    entry = config["models"][model]
    entry["params"] = {name: params for name, params in entry.get("params", {}).items() if name in config["methods"]}
    main = config["tables"]["main"]  # its benchmarks are the evaluate jobs'; its rows, the runs kept
    main["rows"] = [row for row in main["rows"] if row == "base" or row["run"] in config["methods"]]
    main["highlight"] = [run for run in main.get("highlight", []) if run in config["methods"]]
    if tiny:  # one benchmark evaluated
        main["columns"] = main["columns"][-1:]
        main["paper_results"]["columns"] = {column: name for column, name in main["paper_results"]["columns"].items()
                                            if column in main["columns"]}
    config["tables"], config["figures"] = {"main": main}, {}
    config["resources"] = {**config.get("resources", {}),
                           **{group: {"gpu": 1 if cuda else 0, "cpus_per_task": 2} for group in RULES}}
    build_mirror(config, work / "hub", wheels)
    config["data"].update(catalog=str(ROOT / ".test" / "config_math" / "benchmarks.yaml"),
                          mirror=str(data_mirror / "tiny"), model_mirror=str(work / "hub"),
                          build_models=False)  # built here, from the wheels the call carries (no network)
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    locked = subprocess.run([sys.executable, "-m", "fpa", "lock", str(path)], env=job_environment(),
                            capture_output=True, text=True)
    if locked.returncode != 0:
        raise RuntimeError(f"fpa lock {path}: {locked.stderr[-2000:]}")
    return path


def job_environment() -> dict:
    """The jobs' environment: this checkout's package, this interpreter's ``python``, no network."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    pythonpath = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "PYTHONPATH": pythonpath, "PATH": path, "HF_HUB_OFFLINE": "1"}


def job_rows(workdir: Path) -> list[dict]:
    """One row per output the DAG's jobs of ``RULES`` wrote: rule, output, device, dtype, wall s,
    GPU peak (CUDA) and the host's peak (Snakemake's benchmark of the job)."""
    rows = []
    for record_path in sorted((workdir / "results").rglob("*.prov.json")):
        record = json.loads(record_path.read_text())
        if record["rule"] not in RULES:
            continue
        usage = record.get("usage", {})
        output = str(Path(record["output"]["path"]))
        rows.append({"rule": record["rule"], "output": output, "device": usage.get("device", "cpu"),
                     "dtype": job_dtype(record, workdir), "wall_s": usage.get("wall_s"),
                     "gpu_peak_bytes": usage.get("gpu_peak_bytes"),
                     "host_peak_mb": host_peak_mb(workdir, record["rule"], output)})
    return rows


def job_dtype(record: dict, workdir: Path) -> str | None:
    """The dtype a job computed in, as its config (training, cache) or its log (HF backend) names it."""
    config = record.get("config") or {}
    if record["rule"] == "train":
        return (config.get("training") or config).get("precision")
    if record["rule"] == "cache_reference":
        return config.get("dtype")
    for log in (workdir / "logs" / record["rule"]).rglob("*.log"):
        found = BACKEND_LINE.search(log.read_text(errors="replace"))
        if found:
            return found.group(2)
    return None


def host_peak_mb(workdir: Path, rule: str, output: str) -> float | None:
    """The largest ``max_rss`` of the rule's Snakemake benchmark files whose wildcards the output names."""
    peaks = []
    for tsv in (workdir / "logs" / "benchmarks" / rule).rglob("*.tsv"):
        parts = tsv.relative_to(workdir / "logs" / "benchmarks" / rule).with_suffix("").parts
        if all(part in output for part in parts):
            with open(tsv) as handle:
                peaks += [float(row["max_rss"]) for row in csv.DictReader(handle, delimiter="\t")
                          if row.get("max_rss") not in (None, "", "NA", "-")]
    return max(peaks) if peaks else None


def evaluations(config_path: Path) -> list[str]:
    """The evaluate jobs' outputs of every run and the base model: the DAG's targets (they need the
    offline samples, the reference cache, training and model selection)."""
    config = yaml.safe_load(config_path.read_text())
    model, main = next(iter(config["models"])), config["tables"]["main"]
    return [EVALUATION.format(model=model, method=method, seed=seed, bench=bench)
            for method in ["base", *config["methods"]] for seed in config["seeds"] for bench in main["columns"]]


def snakemake_command(config_path: Path, workdir: Path, cuda: bool, *options: str) -> list[str]:
    """The Snakemake call of the DAG to ``evaluations``: 4 cores and the GPU on CUDA, 2 cores on the
    CPU; ``options`` (such as ``-n``) added."""
    # the targets first: --resources and --configfile take several values
    return [sys.executable, "-m", "snakemake", *evaluations(config_path), *options, "-s", str(ROOT / "Snakefile"),
            "-d", str(workdir), "--cores", "4" if cuda else "2", "--resources", f"gpu={1 if cuda else 0}",
            "--configfile", str(config_path)]


def run_dag(work: Path, data_mirror: Path, wheels: Path, cuda: bool, tiny: bool) -> dict:
    """The DAG to ``evaluations`` in one Snakemake call; its jobs' rows and the call's wall time."""
    config = rehearsal_config(work, data_mirror, wheels, cuda, tiny)
    workdir = work / "dag"
    started = time.perf_counter()
    done = subprocess.run(snakemake_command(config, workdir, cuda), env=job_environment(), capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"snakemake exited {done.returncode}: {(done.stdout + done.stderr)[-3000:]}")
    rows = job_rows(workdir)
    return {"config": str(REHEARSAL.relative_to(ROOT)), "rules": list(RULES), "dag_wall_s": round(wall, 1),
            "jobs": rows, "devices": sorted({row["device"] for row in rows})}
