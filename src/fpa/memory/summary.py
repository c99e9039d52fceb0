"""What planning says of a config's cost before any job (``workflow/rules/common.smk``, a few lines on
stderr): its disk and GPU-hours (``fpa.memory.cost.plan_costs``, what ``fpa plan-memory`` prints per job
family with its assumptions), a warning where that disk exceeds ``budget.disk_gb`` or the free space of
the results' file system, and the hub inputs not pinned (``fpa.data.lock.unpinned_inputs``, what
``fpa lock --check`` refuses)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Mapping, Sequence

from fpa.containment import WORK_AREAS
from fpa.data.lock import unpinned_inputs
from fpa.memory.cost import GB, Assumptions, plan_costs, train_problems

#: the directory whose file system the jobs' outputs fill
RESULTS = WORK_AREAS[0]


def cost_lines(config: Mapping, runs: Mapping, catalog: Mapping, root: Path, *, curves: Sequence[str]) -> list[str]:
    """The plan's cost and the inputs it runs unpinned, in a few lines; none for a plan that estimates no
    GPU job (the toy) and pins every input. ``curves``: as ``plan_costs``; ``root``: the working directory."""
    lines = []
    try:
        known = train_problems(config, Assumptions())
        costs = plan_costs(config, runs, root, catalog=catalog, curves=curves) if known else []
    except (OSError, ValueError) as error:  # a record the estimates rest on is missing or unreadable: say so, plan on
        costs = []
        lines.append(f"plan: disk and GPU-hours not estimated: {error}")
    if costs:
        disk = sum(cost.disk_bytes for cost in costs) / GB
        lines.append(f"plan: ~{disk:,.0f} GB of disk and ~{sum(cost.gpu_hours for cost in costs):,.0f} GPU-hours in "
                     f"{sum(cost.jobs for cost in costs)} GPU jobs (per job family, with the assumptions: "
                     f"fpa plan-memory CONFIG)")
        lines += disk_warnings(disk, config["budget"]["disk_gb"], free_gb(root / RESULTS))
    unpinned = unpinned_inputs(config, catalog)
    if unpinned:
        lines.append(f"plan: {len(unpinned)} hub inputs not pinned, fetched at whatever the hub holds when their "
                     f"jobs run: {', '.join(unpinned)} (fpa lock CONFIG pins them)")
    return lines


def disk_warnings(disk_gb: float, budget_gb: float | None, free: float) -> list[str]:
    """A line for each bound the plan's ``disk_gb`` exceeds: ``budget.disk_gb``, the ``free`` GB."""
    warnings = []
    if budget_gb is not None and disk_gb > budget_gb:
        warnings.append(f"disk: the config's jobs write ~{disk_gb:,.0f} GB > budget.disk_gb {budget_gb:,.0f} "
                        f"(per job family: fpa plan-memory CONFIG)")
    if disk_gb > free:
        warnings.append(f"disk: the config's jobs write ~{disk_gb:,.0f} GB > the {free:,.0f} GB free on the file "
                        f"system of {RESULTS}/ (what the plan already wrote counts in the estimate)")
    return warnings


def free_gb(path: Path) -> float:
    """The free space of the file system that holds ``path`` (or would: its nearest existing parent), GB."""
    path = path.absolute()
    while not path.exists():
        path = path.parent
    return shutil.disk_usage(path).free / GB
