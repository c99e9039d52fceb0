"""Scheduling priorities (fpa.planning.priority): a job is never less urgent than a job it feeds,
so that whatever training waits on starts before the jobs that can wait."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from workflow_helpers import plan_from_the_root

from fpa.planning.priority import Priority

ROOT = Path(__file__).resolve().parents[2]


def _plan(tmp_path: Path, configfile: str, *args: str) -> str:
    result = plan_from_the_root(tmp_path, ROOT / "config" / configfile, *args)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def _rule_edges(dot: str) -> set[tuple[str, str]]:
    """(producer, consumer) rule pairs of ``snakemake --rulegraph``."""
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, flags=re.M))
    return {(names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, flags=re.M)}


def _priorities(dry_run: str) -> dict[str, set[int]]:
    """Rule -> the priorities its planned jobs have (Snakemake lists a job's only when it is not 0)."""
    found: dict[str, set[int]] = {}
    for block in re.split(r"^(?:local)?rule (?=\w+:)", dry_run, flags=re.M)[1:]:
        match = re.search(r"^\s+priority: (\d+)$", block, flags=re.M)
        found.setdefault(block.split(":", 1)[0], set()).add(int(match.group(1)) if match else 0)
    return found


@pytest.mark.parametrize("configfile", ["config.yaml", "toy-paper.yaml", "paper.yaml", "paper-code.yaml",
                                        "paper-stepdpo.yaml", "paper-rlvr.yaml"])
def test_no_job_is_less_urgent_than_a_job_it_feeds(tmp_path, configfile):
    edges = _rule_edges(_plan(tmp_path, configfile, "--rulegraph"))
    priorities = _priorities(_plan(tmp_path, configfile))
    assert all(len(values) == 1 for values in priorities.values()), priorities
    priority = {rule: values.pop() for rule, values in priorities.items()}
    assert priority.get("train", priority.get("train_online")) == Priority.TRAINING
    wrong = sorted((producer, priority[producer], consumer, priority[consumer]) for producer, consumer in edges
                   if consumer in priority and producer in priority and priority[producer] < priority[consumer])
    assert not wrong, f"{configfile}: (producer, its priority, consumer, its priority) {wrong}"
    # everything training waits on comes first; the short jobs after the long ones
    upstream = {p for p, c in edges if c in ("train", "train_online")}
    assert all(priority[rule] >= Priority.TRAINING_INPUTS for rule in upstream & priority.keys()), upstream
    if "curve" in priority:
        assert priority["curve"] < priority.get("evaluate", priority.get("generate_code"))
