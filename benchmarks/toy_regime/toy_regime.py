"""Is the toy in the paper's regime? Each candidate world (the toy's task, base model and data: never an
objective, a grader or the evaluation, and the default run's budget for every method; ``worlds.py``) measured
by the pipeline's own analyses, run by Snakemake in a directory of its own (issue 59):

1. ``entanglement``: at the base model, cos(∇log π(y_w), ∇log π(y_l)) of full trajectories of one problem
   (rule ``entanglement``, 64 pairs per seed): mean over pairs > 0 and most pairs > 0;
2. ``offrl``: Off-RL at the default budget (rule ``train``): the log-ratio log π − log π_ref of the
   correct samples below 0 at the end of training while that of the incorrect ones falls;
3. ``offrl``: FPA's extrapolation from an anchor snapshot (rule ``future_policy``): some λ > 0 with
   KL(π_later ‖ π̂_λ) below the anchor's own KL (λ = 0) for a later snapshot;

and ``table``: the world's default-run table (Base, Off-RL, FPA) with FPA − Off-RL and FPA − Base.

    python benchmarks/toy_regime/toy_regime.py --world varied --stage entanglement   # adds to the record
    python benchmarks/toy_regime/toy_regime.py --world varied --stage offrl
    python benchmarks/toy_regime/toy_regime.py --world today --stage table --seeds 101 102 103
    python benchmarks/shared/report.py --print toy_regime                            # the record's tables

Seeds are the config's ``seeds`` (default 42 43 44), written into the config file the script writes; the
record keeps each world's runs by their set of seeds (``preconditions.seed_set``). Stage ``entanglement``
needs the base model and its samples only; stage ``offrl`` trains, and is run for today's world and for a
world whose base model is entangled.
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parents[1]
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from default_run import claims  # noqa: E402
from shared.checkouts import USER_ENVIRONMENT, commit_of, machine  # noqa: E402
from toy_regime.preconditions import holds, seed_set  # noqa: E402
from toy_regime.render import markdown, markdown_headline  # noqa: E402  (report.py renders through this module)
from toy_regime.worlds import FUTURE_POLICY, FUTURE_POLICY_TARGETS, SAME_BASE_MODEL, WINDOW, WORLDS  # noqa: E402

from fpa.aggregation.cost import BENCHMARK_ROOT, STAGES, read_job_cost  # noqa: E402
from fpa.grading.answers import grade_toy  # noqa: E402
from fpa.planning.judge import merge  # noqa: E402

__all__ = ["main", "markdown", "markdown_headline"]

RESULTS = Path(__file__).parent / "results" / "toy_regime.json"
WORK = Path("/tmp/toy_regime")  # one Snakemake directory per world
SEEDS = (42, 43, 44)  # the default's (config/config.yaml), the ones the worlds were chosen on
# one thread per job, two jobs at a time: on cores shared with other work a two-thread job waits on its
# slower thread at every op (the pinned kernels give the same toy weights on 1 and 2 threads:
# docs/archive/toy_calibration.md, "A second pin")
RESOURCES = {rule: {"cpus_per_task": 1} for rule in ("toy_base_model", "sample_offline", "cache_reference")}
TABLE = "results/tables/toy.md"  # stage table: the world's default-run table (Base, Off-RL, FPA)
DIFFERENCES = (("FPA", "Off-RL"), ("FPA", "Base"))
MODEL_DIR = "results/models"


def stage_config(world: str, stage: str, seeds) -> dict:
    """The world's config for ``stage`` on ``seeds``: today's default, the world's overrides, and the analyses
    asked for, merged as Snakemake merges config files."""
    config = merge(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), WORLDS[world][1])
    config = merge(config, {"resources": RESOURCES})
    config["seeds"] = list(seeds)
    if stage == "offrl":
        targets_of_world = FUTURE_POLICY_TARGETS.get(world, FUTURE_POLICY["target_steps"])
        future_policy = {**FUTURE_POLICY, "target_steps": targets_of_world}
        config = merge(config, {"figures": {"future_policy_validation": {}}, "future_policy": future_policy})
        config["methods"] = {"offrl": config["methods"]["offrl"]}
    return config


def targets(stage: str, seeds) -> list[str]:
    if stage == "table":
        return [TABLE]
    if stage == "entanglement":
        return [f"results/analysis/entanglement/toy/base/{seed}.csv" for seed in seeds]
    # the analysis needs the run's snapshots, which rule train writes with its checkpoint (training_metrics.csv)
    return [f"results/analysis/future_policy/toy/offrl/{seed}.csv" for seed in seeds]


def run_stage(world: str, stage: str, seeds) -> None:
    """Snakemake for the stage's outputs in the world's directory; exits naming the log if snakemake fails."""
    directory = WORK / world
    directory.mkdir(parents=True, exist_ok=True)
    if world in SAME_BASE_MODEL and not (directory / MODEL_DIR).exists():
        source = WORK / SAME_BASE_MODEL[world]
        if WORLDS[world][1].get("models") != WORLDS[SAME_BASE_MODEL[world]][1].get("models"):
            raise SystemExit(f"{world}: its models differ from {SAME_BASE_MODEL[world]}'s; "
                             "it cannot share its base model")
        shutil.copytree(source / MODEL_DIR, directory / MODEL_DIR)
    name = f"{stage}-{seed_set(seeds)}"
    config_path = directory / f"{name}.yaml"
    config_path.write_text(yaml.safe_dump(stage_config(world, stage, seeds), sort_keys=False))
    # outputs already there are kept unless an input changed: a later stage reuses the earlier one's, and the
    # table of other seeds is rebuilt (its set of inputs changed)
    command = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), *targets(stage, seeds),
               "-d", str(directory), "--configfile", str(config_path), "--cores", "2",
               "--rerun-triggers", "mtime", "input"]
    env = {**USER_ENVIRONMENT, "PYTHONPATH": str(ROOT / "src")}
    with open(directory / f"{name}.log", "w") as log:
        code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    if code:
        raise SystemExit(f"{directory / (name + '.log')}: snakemake exited {code}")


def job_costs(directory: Path) -> dict:
    """Wall and CPU seconds of every job the world's directory ran so far, summed by stage (as the
    pipeline's cost table sums them: fpa.aggregation.cost); a base model copied from another world is not
    among them."""
    out = {}
    for path in sorted((directory / BENCHMARK_ROOT).rglob("*.tsv")):
        job = read_job_cost(path)
        stage = out.setdefault(STAGES.get(job.rule, job.rule), {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0})
        stage["jobs"] += 1
        stage["wall_s"] = round(stage["wall_s"] + job.wall_s, 1)
        stage["cpu_s"] = round(stage["cpu_s"] + job.cpu_s, 1)
    return out


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def entanglement_seed(directory: Path, seed: int) -> dict:
    """One seed's pairs at the base model: full chains and their final answers alone."""
    rows = read_csv(directory / f"results/analysis/entanglement/toy/base/{seed}.csv")
    out = {}
    for variant in ("full", "answer_only"):
        chosen = [row for row in rows if row["variant"] == variant]
        cosines = [float(row["cosine"]) for row in chosen]
        out[variant] = {"pairs": len(chosen), "mean_cosine": statistics.fmean(cosines),
                        "share_positive": sum(c > 0 for c in cosines) / len(cosines),
                        "median_tokens": statistics.median(int(row["tokens_incorrect"]) for row in chosen),
                        "share_norm_incorrect_larger": statistics.fmean(
                            float(row["norm_incorrect"]) > float(row["norm_correct"]) for row in chosen)}
    return out


def dataset_facts(directory: Path) -> dict:
    """The base model's SFT and the offline samples it gave: what a world changes before any training; of the
    training samples (problems with both outcomes), the share correct: the side most of them are on is the
    side Off-RL pulls the tokens they share towards."""
    metrics = json.loads((directory / "results/models/toy/base/metrics.json").read_text())
    samples = [json.loads(line) for line in open(directory / "results/datasets/toy/samples.jsonl")]
    train = [json.loads(line) for line in open(directory / "results/datasets/toy/train.jsonl")]
    return {"sft_final_loss": metrics["final_loss"], "sft_cpu_s": metrics["cpu_seconds"],
            "samples": len(samples),
            "share_correct": statistics.fmean(grade_toy(s["completion"], s["answer"]) for s in samples),
            "train_samples": len(train), "train_share_correct": statistics.fmean(s["correct"] for s in train)}


def offrl_seed(directory: Path, seed: int) -> dict:
    """One Off-RL run: its log-ratios at the start and the end, and the future-policy KLs."""
    steps = read_csv(directory / f"results/train/toy/offrl/{seed}/checkpoint/training_metrics.csv")

    def window(rows, column):
        values = [float(row[column]) for row in rows if row.get(column) not in (None, "")]
        return statistics.fmean(values) if values else None

    logratio = {f"{cls}_{end}": window(rows, f"logratio_{cls}") for cls in ("correct", "incorrect")
                for end, rows in (("start", steps[:WINDOW]), ("end", steps[-WINDOW:]))}
    kl = {}
    for row in read_csv(directory / f"results/analysis/future_policy/toy/offrl/{seed}.csv"):
        kl.setdefault(row["target_step"], {})[row["lam"]] = float(row["kl_per_token"])
    return {"steps": len(steps), "logratio": logratio, "anchor_step": FUTURE_POLICY["anchor_step"],
            "kl_per_token": kl}



def output_commits(directory: Path, stage: str, seeds) -> list[str]:
    """The commits (``-dirty``: with uncommitted changes) the stage's outputs and the base model name in their
    provenance: a stage whose outputs were there already is read again, not re-run."""
    commits = set()
    for output in ["results/models/toy/base", *targets(stage, seeds)]:
        project = json.loads((directory / (output + ".prov.json")).read_text())["project"]
        commits.add(project["commit"][:7] + ("-dirty" if project["dirty"] else ""))
    return sorted(commits)


def table_differences(directory: Path) -> dict:
    """The world's default-run table and, per column, FPA − Off-RL and FPA − Base: (points, pooled sd)."""
    text = (directory / TABLE).read_text()
    table = claims.parse_table(text)
    columns = list(next(iter(table.values())))
    return {"table": text, "differences": {f"{a} − {b}": {column: claims.difference(table, a, b, column)
                                                           for column in columns} for a, b in DIFFERENCES}}


def measure(world: str, stage: str, seeds) -> dict:
    run_stage(world, stage, seeds)
    directory = WORK / world
    out = {"commits": output_commits(directory, stage, seeds), "harness_commit": commit_of(ROOT),
           "jobs": job_costs(directory)}
    if stage == "table":
        return {**out, **table_differences(directory)}
    read = entanglement_seed if stage == "entanglement" else offrl_seed
    out["seeds"] = {str(seed): read(directory, seed) for seed in seeds}
    if stage == "entanglement":
        out["dataset"] = dataset_facts(directory)
    return out


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", required=True, choices=sorted(WORLDS))
    parser.add_argument("--stage", required=True, choices=("entanglement", "offrl", "table"))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS), metavar="SEED",
                        help=f"the config's seeds for the stage (default: {' '.join(map(str, SEEDS))})")
    parser.add_argument("--stopped", metavar="WHY",
                        help="record the world as tried and the stage as stopped before it measured anything, and why")
    args = parser.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds) or min(args.seeds) < 0:
        parser.error(f"--seeds: expected distinct integers >= 0, got {args.seeds}")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    result = None if args.stopped else {**measure(args.world, args.stage, args.seeds), "cpu": machine()}
    # read after measuring: several worlds measured at once each add their own to the record
    record = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"benchmark": "toy_regime", "worlds": {}}
    world_record = record["worlds"].setdefault(args.world, {"change": WORLDS[args.world][0],
                                                            "overrides": WORLDS[args.world][1], "runs": {}})
    run = world_record["runs"].setdefault(seed_set(args.seeds), {})
    if args.stopped:
        run.setdefault("stopped", {})[args.stage] = args.stopped
    else:
        run[args.stage] = result
        run.get("stopped", {}).pop(args.stage, None)  # measured after all
        if not run.get("stopped", True):
            del run["stopped"]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(holds(run)))


if __name__ == "__main__":
    main()
