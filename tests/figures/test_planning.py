"""Planning every registered figure against every shipped config: a figure whose runs a config
lacks is not planned, never a crash, and a planned figure has each of its roles filled by a run
of the model it is drawn for."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fpa.figures import BASE_ROLE, FIGURES
from fpa.planning import judge, judge_config
from fpa.planning.figures import dag_inputs, figure_slice, planned_figures

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted(path for path in (ROOT / "config").glob("*.yaml") if "models" in yaml.safe_load(path.read_text()))


def _with_every_figure(raw: dict, *, curves: bool) -> dict:
    """``raw`` asking for every figure (a config of the Base row alone: every figure of the base
    model); with ``curves``, also accuracy through training on its first sampled benchmark and a
    future-policy anchor, so the figures that need them can be planned."""
    raw = copy.deepcopy(raw)
    trains = bool(raw.get("methods"))
    raw["figures"] = {**{name: {} for name, figure in FIGURES.items() if trains or figure.of_base},
                      **(raw.get("figures") or {})}
    if curves and trains:
        graded = [name for name, bench in raw["benchmarks"].items()
                  if bench.get("grader", "math") in ("math", "toy")]
        raw["curve_benchmarks"] = raw.get("curve_benchmarks") or graded[:1]
        every = raw.get("training", {}).get("snapshot_every") or 10
        raw["training"] = {**raw.get("training", {}), "snapshot_every": every}
        # the analysis reads snapshots at these steps (the judge checks each is a snapshot's)
        raw["future_policy"] = raw.get("future_policy") or {"anchor_step": every, "target_steps": [2 * every]}
    return raw


def _check_planned(config: dict, runs: dict) -> list[tuple[str, str]]:
    planned = planned_figures(config, runs)
    for model, name in planned:
        slice_ = figure_slice(FIGURES[name], config, runs, model)
        assert slice_["seeds"], (model, name)
        for role, method in slice_["roles"].items():
            assert method == BASE_ROLE or (model, method) in runs, (model, name, role, method)
            if method != BASE_ROLE:
                assert set(slice_["seeds"]) <= set(runs[(model, method)].seeds), (model, name, role)
                assert slice_["files"][role] == runs[(model, method)].trained_as
        assert dag_inputs(name, slice_), (model, name)
    # and nothing unplanned raises either: every (model, figure) is asked
    for model in config["models"]:
        for name in config["figures"]:
            figure_slice(FIGURES[name], config, runs, model)
    return planned


@pytest.mark.parametrize("curves", [False, True], ids=["as_shipped", "with_curves"])
@pytest.mark.parametrize("path", CONFIGS, ids=[path.name for path in CONFIGS])
def test_every_figure_plans_against_every_config(path, curves):
    plan = judge_config(_with_every_figure(yaml.safe_load(path.read_text()), curves=curves), where=str(path))
    planned = _check_planned(plan.config, plan.runs)
    assert planned, f"{path.name}: no figure planned at all"


def test_a_role_filled_on_one_model_only_plans_the_figure_for_that_model():
    """The paper's ablation variants run on Qwen3-4B-Base alone: the targeted-ablation figure is drawn
    for it and not for the other models (this raised KeyError ('qwen2.5-math-7b', 'fpa_cor'))."""
    raw = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    raw["figures"] = {"targeted_ablations": {}}
    raw["curve_benchmarks"] = ["math500"]
    assert judge_config(raw, "paper.yaml").figures.planned() == [("qwen3-4b-base", "targeted_ablations")]
    # a role named explicitly by a method of another model is not filled either
    raw["figures"] = {"training_dynamics": {"fpa": "fpa_cor"}}
    assert judge_config(raw, "paper.yaml").figures.planned() == [("qwen3-4b-base", "training_dynamics")]


def _dry_run(configfile: Path, workdir: Path) -> str:
    """``snakemake -n`` from the repository root (its default config/config.yaml copied beside the
    work directory, as the paper-plan tests do, so it is not merged into ``configfile``)."""
    (workdir / "config").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "config" / "config.yaml", workdir / "config" / "config.yaml")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(configfile),
                             "-d", str(workdir)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def _every_figure_config(name: str, tmp_path: Path) -> Path:
    raw = _with_every_figure(yaml.safe_load((ROOT / "config" / name).read_text()), curves=True)
    raw["future_policy"] = {"anchor_step": 200, "target_steps": [400]}  # snapshots every 200 steps
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


@pytest.mark.parametrize("name, every_figure", [("paper.yaml", True), ("paper-prolonged.yaml", False),
                                                 ("paper-pilot.yaml", False)])
def test_the_dry_run_plans_exactly_the_planned_figures(tmp_path, name, every_figure):
    """The workflow's plan: one figure job per (model, figure) of ``planned_figures``, no error, for
    the paper config asked for every registered figure and the prolonged and pilot configs as shipped."""
    path = _every_figure_config(name, tmp_path) if every_figure else ROOT / "config" / name
    planned = judge([path]).figures.planned()
    output = _dry_run(path, tmp_path / "work")
    drawn = set(re.findall(r"results/figures/[^/\s]+/([^/\s]+)/([a-z_]+)\.png", output))
    assert drawn == set(planned)
    assert re.search(rf"^figure\s+{len(planned)}$", output, re.MULTILINE), output[:2000]
