"""Is the toy in the paper's regime? Each candidate world (the toy's task, base model and data: never an
objective, a grader or the evaluation, and the default run's budget for every method) measured by the
pipeline's own analyses, run by Snakemake in a directory of its own (issue 59):

1. ``entanglement``: at the base model, cos(∇log π(y_w), ∇log π(y_l)) of full trajectories of one problem
   (rule ``entanglement``, seeds 42–44): mean over pairs > 0 and most pairs > 0;
2. ``offrl``: Off-RL at the default budget (rule ``train``): the log-ratio log π − log π_ref of the
   correct samples below 0 at the end of training while that of the incorrect ones falls;
3. ``offrl``: FPA's extrapolation from an anchor snapshot (rule ``future_policy``): some λ > 0 with
   KL(π_later ‖ π̂_λ) below the anchor's own KL (λ = 0) for a later snapshot.

    python benchmarks/toy_regime/toy_regime.py --world varied --stage entanglement   # adds to the record
    python benchmarks/toy_regime/toy_regime.py --world varied --stage offrl
    python benchmarks/shared/report.py --print toy_regime                            # the record's table

Stage ``entanglement`` needs the base model and its samples only; stage ``offrl`` trains, and is run for
today's world and for a world whose base model is entangled.
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

from fpa.aggregation.cost import BENCHMARK_ROOT, STAGES, read_job_cost  # noqa: E402
from fpa.grading.answers import grade_toy  # noqa: E402
from fpa.planning.judge import merge  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "toy_regime.json"
WORK = Path("/tmp/toy_regime")  # one Snakemake directory per world
SEEDS = (42, 43, 44)
# the default budget snapshots every 25 steps of its 94 (config/config.yaml): anchor at the first
FUTURE_POLICY = {"anchor_step": 25, "target_steps": [50, 75], "lams": [0, 0.25, 0.5, 1, 2, 5]}
# one thread per job, two jobs at a time: on cores shared with other work a two-thread job waits on its
# slower thread at every op (the pinned kernels give the same toy weights on 1 and 2 threads:
# docs/archive/toy_calibration.md, "A second pin")
RESOURCES = {rule: {"cpus_per_task": 1} for rule in ("toy_base_model", "sample_offline", "cache_reference")}
WINDOW = 10  # training steps averaged at the start and at the end of a run's log-ratios
TABLE = "results/tables/toy.md"  # stage table: the world's default-run table (Base, Off-RL, FPA; seeds 42-44)
DIFFERENCES = (("FPA", "Off-RL"), ("FPA", "Base"))

#: name -> (what changes against today's world, overrides of config/config.yaml)
WORLDS = {
    "today": ("today's world (config/config.yaml)", {}),
    "varied": ("each step's surface form and the ending's phrase drawn with uneven weights (trace_style varied)",
               {"models": {"toy": {"toy": {"trace_style": "varied"}}}}),
    "varied_t05": ("`varied`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)",
                   {"models": {"toy": {"toy": {"trace_style": "varied"}}}, "dataset": {"temperature": 0.5}}),
    "peaked": ("as `varied`, each choice's dominant form likelier (0.8) and its rare ones more numerous "
               "(trace_style peaked)", {"models": {"toy": {"toy": {"trace_style": "peaked"}}}}),
    "coda": ("today's steps, then a closing sentence of six words drawn with uneven weights and the ending's "
             "phrase so (trace_style coda)", {"models": {"toy": {"toy": {"trace_style": "coda"}}}}),
    "coda_t05": ("`coda`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)",
                 {"models": {"toy": {"toy": {"trace_style": "coda"}}}, "dataset": {"temperature": 0.5}}),
    "sft500": ("today's world with a less certain base model: half the SFT steps (steps 500)",
               {"models": {"toy": {"toy": {"steps": 500}}}}),
    "today_t05": ("today's base model, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)",
                  {"dataset": {"temperature": 0.5}}),
    "peaked_t05": ("`peaked`, its offline samples drawn at T = 0.5 (evaluation stays at 0.7)",
                   {"models": {"toy": {"toy": {"trace_style": "peaked"}}}, "dataset": {"temperature": 0.5}}),
}
#: the analysis of a world whose Off-RL run stops before a snapshot of FUTURE_POLICY: sft500's base model gets
#: fewer problems partly right, and its 70 steps have no snapshot at 75
FUTURE_POLICY_TARGETS = {"sft500": [50]}
#: a world whose base model is another's (the same model settings): its directory starts from a copy of that
#: world's model, so the same SFT is not run twice
SAME_BASE_MODEL = {"varied_t05": "varied", "coda_t05": "coda", "today_t05": "today", "peaked_t05": "peaked"}
MODEL_DIR = "results/models"


def stage_config(world: str, stage: str) -> dict:
    """The world's config for ``stage``: today's default, the world's overrides, and the analyses asked for,
    merged as Snakemake merges config files."""
    config = merge(yaml.safe_load((ROOT / "config" / "config.yaml").read_text()), WORLDS[world][1])
    config = merge(config, {"resources": RESOURCES})
    if stage == "offrl":
        targets_of_world = FUTURE_POLICY_TARGETS.get(world, FUTURE_POLICY["target_steps"])
        future_policy = {**FUTURE_POLICY, "target_steps": targets_of_world}
        config = merge(config, {"figures": {"future_policy_validation": {}}, "future_policy": future_policy})
        config["methods"] = {"offrl": config["methods"]["offrl"]}
    return config


def targets(stage: str) -> list[str]:
    if stage == "table":
        return [TABLE]
    if stage == "entanglement":
        return [f"results/analysis/entanglement/toy/base/{seed}.csv" for seed in SEEDS]
    # the analysis needs the run's snapshots, which rule train writes with its checkpoint (training_metrics.csv)
    return [f"results/analysis/future_policy/toy/offrl/{seed}.csv" for seed in SEEDS]


def run_stage(world: str, stage: str) -> dict:
    """Snakemake for the stage's outputs in the world's directory; exits naming the log if snakemake fails."""
    directory = WORK / world
    directory.mkdir(parents=True, exist_ok=True)
    if world in SAME_BASE_MODEL and not (directory / MODEL_DIR).exists():
        source = WORK / SAME_BASE_MODEL[world]
        if stage_config(world, stage)["models"] != stage_config(SAME_BASE_MODEL[world], stage)["models"]:
            raise SystemExit(f"{world}: its models differ from {SAME_BASE_MODEL[world]}'s; "
                             "it cannot share its base model")
        shutil.copytree(source / MODEL_DIR, directory / MODEL_DIR)
    config_path = directory / f"{stage}.yaml"
    config_path.write_text(yaml.safe_dump(stage_config(world, stage), sort_keys=False))
    # outputs already there are kept unless an input changed: a later stage reuses the earlier one's
    command = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), *targets(stage), "-d", str(directory),
               "--configfile", str(config_path), "--cores", "2", "--rerun-triggers", "mtime", "input"]
    env = {**USER_ENVIRONMENT, "PYTHONPATH": str(ROOT / "src")}
    with open(directory / f"{stage}.log", "w") as log:
        code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    if code:
        raise SystemExit(f"{directory / (stage + '.log')}: snakemake exited {code}")


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
    """The base model's SFT and the offline samples it gave: what a world changes before any training."""
    metrics = json.loads((directory / "results/models/toy/base/metrics.json").read_text())
    samples = [json.loads(line) for line in open(directory / "results/datasets/toy/samples.jsonl")]
    return {"sft_final_loss": metrics["final_loss"], "sft_cpu_s": metrics["cpu_seconds"],
            "samples": len(samples),
            "share_correct": statistics.fmean(grade_toy(s["completion"], s["answer"]) for s in samples),
            "train_samples": sum(1 for _ in open(directory / "results/datasets/toy/train.jsonl"))}


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


def holds(world_record: dict) -> dict:
    """Each precondition measured: True, False, or None where its stage has not run."""
    ent = world_record.get("entanglement")
    off = world_record.get("offrl")
    out = {"entangled": None, "over_penalised": None, "extrapolates": None, "extrapolates_on_mean": None}
    if ent:
        full = [seed["full"] for seed in ent["seeds"].values()]
        out["entangled"] = (statistics.fmean(s["mean_cosine"] for s in full) > 0
                            and sum(s["share_positive"] * s["pairs"] for s in full) > sum(s["pairs"] for s in full) / 2)
    if off:
        seeds = off["seeds"].values()
        out["over_penalised"] = all(s["logratio"]["correct_end"] < 0
                                    and s["logratio"]["correct_end"] < s["logratio"]["correct_start"]
                                    and s["logratio"]["incorrect_end"] < s["logratio"]["incorrect_start"]
                                    for s in seeds)
        out["extrapolates"] = all(any(min(v for lam, v in kls.items() if float(lam) > 0) < kls["0.0"]
                                      for kls in s["kl_per_token"].values()) for s in seeds)
        out["extrapolates_on_mean"] = any(min(v for lam, v in kls.items() if float(lam) > 0) < kls["0.0"]
                                          for kls in mean_kl(off).values())
    return out


def mean_kl(offrl: dict) -> dict:
    """target step -> λ -> KL per token averaged over the seeds: what figure future_policy_validation plots
    and marks its closest λ on."""
    runs = [run["kl_per_token"] for run in offrl["seeds"].values()]
    return {target: {lam: statistics.fmean(run[target][lam] for run in runs) for lam in kls}
            for target, kls in runs[0].items()}


def output_commits(directory: Path, stage: str) -> list[str]:
    """The commits (``-dirty``: with uncommitted changes) the stage's outputs and the base model name in their
    provenance: a stage whose outputs were there already is read again, not re-run."""
    outputs = ["results/models/toy/base", *targets(stage)]
    commits = set()
    for output in outputs:
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


def measure(world: str, stage: str) -> dict:
    run_stage(world, stage)
    directory = WORK / world
    if stage == "table":
        return {"commits": output_commits(directory, stage), "harness_commit": commit_of(ROOT),
                "jobs": job_costs(directory), **table_differences(directory)}
    read = entanglement_seed if stage == "entanglement" else offrl_seed
    out = {"commits": output_commits(directory, stage), "harness_commit": commit_of(ROOT), "jobs": job_costs(directory),
           "seeds": {str(seed): read(directory, seed) for seed in SEEDS}}
    if stage == "entanglement":
        out["dataset"] = dataset_facts(directory)
    return out


def _seeds(values) -> str:
    return ", ".join(f"{v:+.2f}" for v in values)


def _verdict(value) -> str:
    return {True: "yes", False: "**no**", None: "not run"}[value]


def entanglement_row(name: str, world: dict) -> str:
    ent = world["entanglement"]
    full = [seed["full"] for seed in ent["seeds"].values()]
    answer = [seed["answer_only"] for seed in ent["seeds"].values()]
    pairs = sum(s["pairs"] for s in full)
    positive = sum(s["share_positive"] * s["pairs"] for s in full) / pairs
    return (f"| `{name}` | {world['change']} | {ent['dataset']['share_correct']:.1%} | "
            f"{statistics.fmean(s['median_tokens'] for s in full):.0f} | "
            f"{statistics.fmean(s['mean_cosine'] for s in full):+.2f} ({_seeds(s['mean_cosine'] for s in full)}) | "
            f"{positive:.0%} of {pairs} | {statistics.fmean(s['mean_cosine'] for s in answer):+.2f} | "
            f"{_verdict(holds(world)['entangled'])} | {', '.join(f'`{c}`' for c in ent['commits'])} |")


def _kl_cell(kl_per_token: dict) -> str:
    """Per later snapshot: the anchor's KL / the least KL over λ > 0 (that λ)."""
    cells = []
    for target, kl in kl_per_token.items():
        best, lam = min((value, float(lam)) for lam, value in kl.items() if float(lam) > 0)
        cells.append(f"→ {target}: {kl['0.0']:.4f} / {best:.4f} (λ = {lam:g})")
    return "; ".join(cells)


def offrl_rows(name: str, world: dict) -> list[str]:
    rows = []
    for seed, run in world["offrl"]["seeds"].items():
        lr = run["logratio"]
        kls = _kl_cell(run["kl_per_token"])
        rows.append(f"| `{name}` | {seed} | {run['steps']} | {lr['correct_start']:+.2f} → {lr['correct_end']:+.2f} | "
                    f"{lr['incorrect_start']:+.2f} → {lr['incorrect_end']:+.2f} | {kls} |")
    return rows


def markdown(record: dict) -> str:
    """The record's worlds: precondition 1 for every world, 2 and 3 for those that reached stage offrl."""
    worlds = record["worlds"]
    cpus = sorted({stage["cpu"]["model"] for world in worlds.values() for key, stage in world.items()
                   if key in ("entanglement", "offrl")})
    lines = ["**Precondition 1, gradient entanglement at the base model** (rule `entanglement`, 64 pairs per seed, "
             "seeds 42–44; full trajectories, and the same pairs cut to their final answer)", "",
             "| world | what changes | correct samples | median tokens (incorrect) | mean cos, full (per seed) | "
             "pairs with cos > 0 | mean cos, answer only | 1 holds | commits (provenance) |",
             "|---|---|---:|---:|---|---|---:|---|---|"]
    lines += [entanglement_row(name, world) for name, world in worlds.items() if "entanglement" in world]
    stopped = [f"`{name}` ({world['change']}), stage {stage}: {why}" for name, world in worlds.items()
               for stage, why in world.get("stopped", {}).items()]
    if stopped:
        lines += ["", "Tried and stopped before measuring: " + "; ".join(stopped) + "."]
    reached = {name: world for name, world in worlds.items() if "offrl" in world}
    if reached:
        lines += ["", "**Preconditions 2 and 3, Off-RL at the default budget** (log π − log π_ref summed over a "
                  f"trajectory, mean of the first and of the last {WINDOW} steps; KL(π_later ‖ π̂_λ) per token "
                  "from "
                  f"the anchor at step {FUTURE_POLICY['anchor_step']}: the anchor's own (λ = 0) / the least over "
                  "λ > 0)", "",
                  "| world | seed | steps | log-ratio, correct | log-ratio, incorrect | KL anchor / best λ > 0 |",
                  "|---|---:|---:|---|---|---|"]
        for name, world in reached.items():
            lines += offrl_rows(name, world)
        lines += ["", "| world | 1 entangled | 2 correct samples pushed down, every seed | 3 π̂_λ closer than the "
                  "anchor, every seed | 3 on the seeds' mean KL (as the figure marks it) | KL of the seeds' mean, "
                  "anchor / best λ > 0 |", "|---|---|---|---|---|---|"]
        for name, world in reached.items():
            lines.append(f"| `{name}` | " + " | ".join(_verdict(v) for v in holds(world).values())
                         + f" | {_kl_cell(mean_kl(world['offrl']))} |")
    for name, world in worlds.items():
        if "table" in world:
            lines += ["", f"**The default run's table of `{name}`** (stage table: Base, Off-RL and FPA at the default "
                      "budget, seeds 42–44; differences in Pass@1 points and, in parentheses, pooled sd over the "
                      "seeds)", "", world["table"]["table"].strip(), "",
                      "| difference | " + " | ".join(next(iter(world["table"]["differences"].values()))) + " |",
                      "|---|" + "---:|" * len(next(iter(world["table"]["differences"].values())))]
            lines += [f"| {label} | " + " | ".join(f"{delta:+.2f} ({sds:+.1f})" for delta, sds in cells.values()) + " |"
                      for label, cells in world["table"]["differences"].items()]
    lines += ["", f"Measured by `python benchmarks/toy_regime/toy_regime.py` on 2 cores of an {', '.join(cpus)}, "
              "shared with other work (wall times are not comparable between worlds)."]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    worlds = record["worlds"]
    met = [name for name, world in worlds.items() if all(value for key, value in holds(world).items()
                                                           if key != "extrapolates_on_mean")]
    entangled = [name for name, world in worlds.items() if holds(world)["entangled"]]
    measured = [name for name, world in worlds.items() if "entanglement" in world]
    return (f"{len(measured)} worlds measured; entangled at the base model: {', '.join(entangled) or 'none'}; "
            f"all three preconditions: {', '.join(met) or 'none'}\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", required=True, choices=sorted(WORLDS))
    parser.add_argument("--stage", required=True, choices=("entanglement", "offrl", "table"))
    parser.add_argument("--stopped", metavar="WHY",
                        help="record the world as tried and the stage as stopped before it measured anything, and why")
    args = parser.parse_args(argv)
    result = None if args.stopped else {**measure(args.world, args.stage), "cpu": machine()}
    # read after measuring: several worlds measured at once each add their own to the record
    record = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"benchmark": "toy_regime", "worlds": {}}
    world_record = record["worlds"].setdefault(args.world, {"change": WORLDS[args.world][0],
                                                            "overrides": WORLDS[args.world][1]})
    if args.stopped:
        world_record.setdefault("stopped", {})[args.stage] = args.stopped
    else:
        world_record[args.stage] = result
        world_record.get("stopped", {}).pop(args.stage, None)  # measured after all
        if not world_record.get("stopped", True):
            del world_record["stopped"]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(holds(world_record)))


if __name__ == "__main__":
    main()
