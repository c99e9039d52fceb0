"""Incremental for code too, on the paper config's plan: every job of ``config/paper.yaml`` recorded as
run (Snakemake's metadata, by ``--touch``), then a change to the package's code. Adding an objective
module plans nothing; a method that uses it plans only that method's jobs (and the tables, cost and
reproduction records that read them); editing an objective plans exactly the runs whose objective's
code imports it."""

from __future__ import annotations

import re

import pytest
import yaml
from workflow_helpers import complete_by_touch, copy_project, edited, job_counts, snakemake

from fpa.objectives import module_of
from fpa.planning import judge
from fpa.provenance.fingerprint import module_closure

pytestmark = pytest.mark.slow  # every job of the paper (the count docs/paper.md checks) touched, then four dry runs

NEW_OBJECTIVE = "mine"
# a copy of SFT under another name: what a user's new module holds is beside the point
NEW_MODULE = ('"sft", SFTParams', f'"{NEW_OBJECTIVE}", SFTParams')


@pytest.fixture(scope="module")
def completed(tmp_path_factory):
    """A copy of the project, and a workdir in which every job of the paper's plan is recorded as run."""
    base = tmp_path_factory.mktemp("incremental")
    project = copy_project(base)
    workdir = base / "work"
    complete_by_touch(project, workdir, project / "config" / "paper.yaml")
    assert _planned(project, workdir)[0] == {}
    return project, workdir


def _planned(project, workdir, config=None):
    result = snakemake(project, workdir, config or project / "config" / "paper.yaml", "-n", "--cores", "1")
    return job_counts(result.stdout + result.stderr), result.stdout + result.stderr


def _planned_runs(text: str) -> set[tuple[str, str, str]]:
    """(model, run, seed) of each planned train job."""
    return set(re.findall(r"output: results/train/([^/]+)/([^/]+)/(\d+)/checkpoint", text))


def test_an_added_objective_plans_nothing_until_a_method_uses_it(completed, tmp_path):
    project, workdir = completed
    objectives = project / "src" / "fpa" / "objectives"
    (objectives / f"{NEW_OBJECTIVE}.py").write_text((objectives / "sft.py").read_text().replace(*NEW_MODULE))
    assert _planned(project, workdir)[0] == {}
    config = yaml.safe_load((project / "config" / "paper.yaml").read_text())
    config["methods"][NEW_OBJECTIVE] = {"objective": NEW_OBJECTIVE}
    config["tables"]["main"]["rows"].append({"run": NEW_OBJECTIVE})
    using = tmp_path / "using.yaml"
    using.write_text(yaml.safe_dump(config, sort_keys=False))
    counts, text = _planned(project, workdir, using)
    models = len(config["models"])
    assert counts == {"train": models, "select_checkpoint": models, "evaluate": models, "aggregate": 1,
                      "cost": 1, "reproduction": 1, "all": 1, "total": 3 * models + 4}
    assert {run for _, run, _ in _planned_runs(text)} == {NEW_OBJECTIVE}


def test_editing_an_objective_plans_exactly_the_runs_whose_code_imports_it(completed):
    project, workdir = completed
    with edited(project / "src" / "fpa" / "objectives" / "dpo.py"):
        counts, text = _planned(project, workdir)
    plan = judge([project / "config" / "paper.yaml"])
    # the (model, run, seed)s the tables read, as the plan trains them (test_paper_plan)
    read = {(key.model, key.method, str(seed)) for layout in plan.layouts.values()
            for key in layout.cell_keys() for seed in key.seeds if key.method != "base"}
    importing = {entry for entry in read
                 if "fpa.objectives.dpo" in module_closure(module_of(plan.runs[entry[:2]].objective))}
    assert {plan.runs[entry[:2]].objective for entry in importing} == {
        "dpo", "rpo", "dpop", "kto", "apo"}  # the others reuse DPO's pairs and means
    assert _planned_runs(text) == importing
    assert counts["train"] == counts["evaluate"] == counts["select_checkpoint"] == len(importing)
    assert set(counts) == {"train", "select_checkpoint", "evaluate", "aggregate", "cost", "reproduction", "all",
                           "total"}


def test_documenting_a_module_every_job_imports_plans_nothing(completed):
    """A docstring reworded, a comment and blank lines added in ``fpa.precision``, which every training,
    sampling and evaluation job imports: nothing to re-run. (Its code edited instead, every such job
    re-runs: ``edited`` appends a statement.)"""
    project, workdir = completed
    assert "fpa.precision" in module_closure("fpa.training.loop")
    precision = project / "src" / "fpa" / "precision.py"
    original = precision.read_text()
    assert original.startswith('"""The precision policy:')
    precision.write_text(original.replace('"""The precision policy:', '"""The precision policy, reworded:', 1)
                         + "\n\n# a comment of its own\n")
    try:
        assert _planned(project, workdir)[0] == {}
        with edited(precision):
            assert _planned(project, workdir)[0]["train"] > 0
    finally:
        precision.write_text(original)
