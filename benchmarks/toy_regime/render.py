"""The Markdown of the toy-regime record (docs/toy.md, "The regime"; the README's headline): each world's runs,
one row per set of seeds, every number read from the record."""

from __future__ import annotations

import statistics

from toy_regime.preconditions import holds, mean_kl, world_holds
from toy_regime.worlds import FUTURE_POLICY, WINDOW


def _seeds(values) -> str:
    return ", ".join(f"{v:+.2f}" for v in values)


def _verdict(value) -> str:
    return {True: "yes", False: "**no**", None: "not run"}[value]


def _label(seed_set: str) -> str:
    return seed_set.replace("-", "–")


def _runs(record: dict, stage: str):
    """(world name, world, seed set, the run's stage) for each run that measured ``stage``."""
    for name, world in record["worlds"].items():
        for seeds, run in world["runs"].items():
            if stage in run:
                yield name, world, seeds, run


def entanglement_row(name: str, world: dict, seeds: str, run: dict) -> str:
    ent = run["entanglement"]
    full = [seed["full"] for seed in ent["seeds"].values()]
    answer = [seed["answer_only"] for seed in ent["seeds"].values()]
    pairs = sum(s["pairs"] for s in full)
    positive = sum(s["share_positive"] * s["pairs"] for s in full) / pairs
    dataset = ent["dataset"]
    train = f"{dataset['train_share_correct']:.0%}" if "train_share_correct" in dataset else "not read"
    return (f"| `{name}` | {world['change']} | {_label(seeds)} | {dataset['share_correct']:.1%} | {train} | "
            f"{statistics.fmean(s['median_tokens'] for s in full):.0f} | "
            f"{statistics.fmean(s['mean_cosine'] for s in full):+.2f} ({_seeds(s['mean_cosine'] for s in full)}) | "
            f"{positive:.0%} of {pairs} | {statistics.fmean(s['mean_cosine'] for s in answer):+.2f} | "
            f"{_verdict(holds(run)['entangled'])} | {', '.join(f'`{c}`' for c in ent['commits'])} |")


def _kl_cell(kl_per_token: dict) -> str:
    """Per later snapshot: the anchor's KL / the least KL over λ > 0 (that λ)."""
    cells = []
    for target, kl in kl_per_token.items():
        best, lam = min((value, float(lam)) for lam, value in kl.items() if float(lam) > 0)
        cells.append(f"→ {target}: {kl['0.0']:.4f} / {best:.4f} (λ = {lam:g})")
    return "; ".join(cells)


def offrl_rows(name: str, run: dict) -> list[str]:
    rows = []
    for seed, seed_run in run["offrl"]["seeds"].items():
        lr = seed_run["logratio"]
        rows.append(f"| `{name}` | {seed} | {seed_run['steps']} | {lr['correct_start']:+.2f} → {lr['correct_end']:+.2f} | "
                    f"{lr['incorrect_start']:+.2f} → {lr['incorrect_end']:+.2f} | {_kl_cell(seed_run['kl_per_token'])} |")
    return rows


def entanglement_section(record: dict) -> list[str]:
    lines = ["**Precondition 1, gradient entanglement at the base model** (rule `entanglement`, 64 pairs per seed; "
             "full trajectories, and the same pairs cut to their final answer)", "",
             "| world | what changes | seeds | correct samples | correct, of the training samples | median tokens "
             "(incorrect) | mean cos, full (per seed) | pairs with cos > 0 | mean cos, answer only | 1 holds | "
             "commits (provenance) |", "|---|---|---|---:|---:|---:|---|---|---:|---|---|"]
    lines += [entanglement_row(*row) for row in _runs(record, "entanglement")]
    stopped = [f"`{name}` ({world['change']}), seeds {_label(seeds)}, stage {stage}: {why}"
               for name, world, seeds, run in _runs(record, "stopped") for stage, why in run["stopped"].items()]
    return lines + (["", "Tried and stopped before measuring: " + "; ".join(stopped) + "."] if stopped else [])


def offrl_section(record: dict) -> list[str]:
    reached = list(_runs(record, "offrl"))
    if not reached:
        return []
    lines = ["", "**Preconditions 2 and 3, Off-RL at the default budget** (log π − log π_ref summed over a "
             f"trajectory, mean of the first and of the last {WINDOW} steps; KL(π_later ‖ π̂_λ) per token from "
             f"the anchor at step {FUTURE_POLICY['anchor_step']}: the anchor's own (λ = 0) / the least over λ > 0)", "",
             "| world | seed | steps | log-ratio, correct | log-ratio, incorrect | KL anchor / best λ > 0 |",
             "|---|---:|---:|---|---|---|"]
    for name, _, _, run in reached:
        lines += offrl_rows(name, run)
    lines += ["", "| world | seeds | 1 entangled | 2 correct samples pushed down, every seed | 3 π̂_λ closer than the "
              "anchor, every seed | 3 on the seeds' mean KL (as the figure marks it) | KL of the seeds' mean, "
              "anchor / best λ > 0 |", "|---|---|---|---|---|---|---|"]
    for name, _, seeds, run in reached:
        lines.append(f"| `{name}` | {_label(seeds)} | " + " | ".join(_verdict(v) for v in holds(run).values())
                     + f" | {_kl_cell(mean_kl(run['offrl']))} |")
    return lines


def table_section(name: str, world: dict) -> list[str]:
    """The world's default-run tables, one per set of seeds, and their differences side by side."""
    runs = {seeds: run["table"] for seeds, run in world["runs"].items() if "table" in run}
    if not runs:
        return []
    lines = []
    for seeds, table in runs.items():
        lines += ["", f"**The default run's table of `{name}`, seeds {_label(seeds)}** (stage table: Base, Off-RL "
                  "and FPA at the default budget)", "", table["table"].strip()]
    labels = next(iter(runs.values()))["differences"]  # difference -> column -> (points, pooled sd)
    columns = list(next(iter(labels.values())))
    lines += ["", f"**`{name}`: differences** in Pass@1 points and, in parentheses, in pooled sd over the seeds", "",
              "| difference | seeds | " + " | ".join(columns) + " |", "|---|---|" + "---:|" * len(columns)]
    lines += [f"| {label} | {_label(seeds)} | " + " | ".join(f"{delta:+.2f} ({sds:+.1f})" for delta, sds in
                                                        table["differences"][label].values()) + " |"
              for label in labels for seeds, table in runs.items()]
    return lines


def markdown(record: dict) -> str:
    """The record's worlds: precondition 1 for every run, 2 and 3 for those that reached stage offrl, and the
    default-run tables measured."""
    worlds = record["worlds"]
    cpus = sorted({stage["cpu"]["model"] for world in worlds.values() for run in world["runs"].values()
                   for key, stage in run.items() if key in ("entanglement", "offrl", "table")})
    lines = entanglement_section(record) + offrl_section(record)
    for name, world in worlds.items():
        lines += table_section(name, world)
    lines += ["", f"Measured by `python benchmarks/toy_regime/toy_regime.py` on 2 cores of an {', '.join(cpus)}, "
              "shared with other work (wall times are not comparable between worlds)."]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    worlds = record["worlds"]
    verdicts = {name: world_holds(world) for name, world in worlds.items()}
    met = [name for name, verdict in verdicts.items()
           if all(value for key, value in verdict.items() if key != "extrapolates_on_mean")]
    entangled = [name for name, verdict in verdicts.items() if verdict["entangled"]]
    measured = [name for name, world in worlds.items() if any("entanglement" in run for run in world["runs"].values())]
    return (f"{len(measured)} worlds measured; entangled at the base model (every set of seeds measured): "
            f"{', '.join(entangled) or 'none'}; all three preconditions: {', '.join(met) or 'none'}\n")
