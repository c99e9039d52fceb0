"""Which of issue 59's three preconditions a world's measurements meet, one set of seeds at a time.

A world's record keeps one run per set of seeds (``runs``, keyed by ``seed_set``): the stages measured on
those seeds (``entanglement``, ``offrl``, ``table``), so seeds nobody tuned for sit beside the default's.
"""

from __future__ import annotations

import statistics

#: the preconditions, in the order the docs' tables give them
PRECONDITIONS = ("entangled", "over_penalised", "extrapolates", "extrapolates_on_mean")


def seed_set(seeds) -> str:
    """The record's key of a set of seeds: ``42-44`` for a run of consecutive seeds, else ``1,5``."""
    seeds = sorted(seeds)
    consecutive = len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1))
    return f"{seeds[0]}-{seeds[-1]}" if consecutive else ",".join(map(str, seeds))


def holds(run: dict) -> dict:
    """Each precondition measured on one run's seeds: True, False, or None where its stage has not run."""
    ent = run.get("entanglement")
    off = run.get("offrl")
    out = dict.fromkeys(PRECONDITIONS)
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
        out["extrapolates"] = all(_closer_than_anchor(s["kl_per_token"]) for s in seeds)
        out["extrapolates_on_mean"] = _closer_than_anchor(mean_kl(off))
    return out


def _closer_than_anchor(kl_per_token: dict) -> bool:
    """Some later snapshot is closer to π̂_λ at some λ > 0 than to the anchor (λ = 0)."""
    return any(min(v for lam, v in kls.items() if float(lam) > 0) < kls["0.0"] for kls in kl_per_token.values())


def world_holds(world: dict) -> dict:
    """Each precondition over every run of the world that measured it: True only where every one meets it."""
    verdicts = [holds(run) for run in world["runs"].values()]
    out = {}
    for key in PRECONDITIONS:
        measured = [verdict[key] for verdict in verdicts if verdict[key] is not None]
        out[key] = all(measured) if measured else None
    return out


def mean_kl(offrl: dict) -> dict:
    """target step -> λ -> KL per token averaged over the seeds: what figure future_policy_validation plots
    and marks its closest λ on."""
    runs = [run["kl_per_token"] for run in offrl["seeds"].values()]
    return {target: {lam: statistics.fmean(run[target][lam] for run in runs) for lam in kls}
            for target, kls in runs[0].items()}
