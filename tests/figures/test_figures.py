"""Figures: role resolution from the config, and every registered figure drawn from constructed
runs (PNG + PDF + provenance naming every file drawn)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from figure_helpers import write_analysis, write_run, write_stages

from fpa.errors import ConfigError
from fpa.figures import FIGURES, ROLE_STYLES
from fpa.planning.figures import figure_slice, planned_figures, resolve_roles
from fpa.figures import data
from fpa.paths import ANALYSIS, CURVE, EVALUATION, REFERENCE_CACHE, TRAINING_METRICS, TRAIN_SPLIT
from fpa.io import read_json
from fpa.planning import judge, judge_config


def _config(**overrides):
    config = {
        "models": {"toy": {"source": "toy", "prompt_template": "Q: {problem}\nA:"}},
        "benchmarks": {"toy6": {"source": "toy", "n_problems": 4}},
        "tables": {"toy": ["toy6"]},
        "methods": {"offrl": {"objective": "offrl"}, "fpa_l1": {"objective": "fpa", "label": "FPA (λ=1)"},
                    "cor": {"objective": "fpa_cor"}, "incor": {"objective": "fpa_incor"}},
        "seeds": [1, 2],
        "training": {"snapshot_every": 10},
        "curve_benchmarks": ["toy6"],
        "figures": {"training_dynamics": {}, "prolonged_training": {}},
        "future_policy": {"anchor_step": 10, "target_steps": [20, 40]},
    }
    config.update(overrides)
    plan = judge_config(config)
    return plan.config, plan.runs


def test_roles_resolve_by_name_then_objective_and_explicit_choice():
    config, runs = _config()
    assert resolve_roles(FIGURES["training_dynamics"], config, runs, "toy") == {"offrl": "offrl", "fpa": "fpa_l1"}
    config["figures"]["training_dynamics"] = {"fpa": "cor"}
    assert resolve_roles(FIGURES["training_dynamics"], config, runs, "toy")["fpa"] == "cor"


@pytest.mark.parametrize("config_file", ["toy-paper.yaml", "paper.yaml", "paper-prolonged.yaml"])
def test_a_method_keeps_its_style_in_every_figure_and_each_figure_tells_its_methods_apart(config_file):
    """The toy-paper config draws 13 methods in one figure beside Off-RL and FPA in another: a method
    filling a fixed role has that role's colour in every figure, and no two lines of a figure look alike."""
    from fpa.figures.style import line_style

    plan = judge([Path(__file__).resolve().parents[2] / "config" / config_file])
    config, runs = plan.config, plan.runs
    for model in config["models"]:
        style_of_method: dict[str, set[int]] = {}
        for _, name in [pair for pair in planned_figures(config, runs) if pair[0] == model]:
            slice_ = figure_slice(FIGURES[name], config, runs, model)
            looks = [tuple(line_style(index).values()) for index in slice_["styles"].values()]
            assert len(set(looks)) == len(looks), (name, slice_["styles"])
            for role, method in slice_["roles"].items():
                if FIGURES[name].roles or runs[(model, method)].objective in ROLE_STYLES:
                    style_of_method.setdefault(method, set()).add(slice_["styles"][role])
        assert all(len(styles) == 1 for styles in style_of_method.values()), (model, style_of_method)


def test_adding_a_method_changes_no_other_methods_style():
    config, runs = _config(figures={"accuracy_curves": {}, "training_dynamics": {}})
    before = figure_slice(FIGURES["accuracy_curves"], config, runs, "toy")["styles"]
    config, runs = _config(figures={"accuracy_curves": {}, "training_dynamics": {}},
                           methods={"sft": {"objective": "sft"}, **_config()[0]["methods"], "dpo": {"objective": "dpo"}})
    after = figure_slice(FIGURES["accuracy_curves"], config, runs, "toy")["styles"]
    assert {method: after[method] for method in before} == before
    assert figure_slice(FIGURES["training_dynamics"], config, runs, "toy")["styles"] == {
        "offrl": after["offrl"], "fpa": after["fpa_l1"]}


@pytest.mark.parametrize("extra_methods, beside", [(0, False), (4, True)])
def test_the_accuracy_legend_goes_beside_the_curves_when_they_are_many(tmp_path, monkeypatch, extra_methods, beside):
    from fpa.figures.inputs import figure_inputs
    from fpa.figures.accuracy_curves import LEGEND_INSIDE_MAX, draw

    monkeypatch.chdir(tmp_path)
    methods = {**_config()[0]["methods"], **{f"sft{i}": {"objective": "sft"} for i in range(extra_methods)}}
    config, runs = _config(figures={"accuracy_curves": {}}, methods=methods)
    slice_ = figure_slice(FIGURES["accuracy_curves"], config, runs, "toy")
    for method in slice_["roles"].values():
        for seed in config["seeds"]:
            write_run("toy", method, seed)
    # as rule figure passes it: sorted JSON (fpa.planning.stage.as_json), the config's order lost
    figure = draw(figure_inputs("accuracy_curves", json.loads(json.dumps(slice_, sort_keys=True))))
    assert (len(slice_["roles"]) > LEGEND_INSIDE_MAX) == beside
    assert (len(figure.legends) == 1, figure.axes[0].get_legend() is None) == (beside, beside)
    labels = [text.get_text() for text in (figure.legends[0] if beside else figure.axes[0].get_legend()).get_texts()]
    # Off-RL and FPA first, as in every figure, then the others in config order, then the base model's level
    assert labels == [slice_["labels"][role] for role in ("offrl", "fpa_l1", "cor", "incor")] + [
        slice_["labels"][f"sft{i}"] for i in range(extra_methods)] + ["Base"]


def test_figures_without_their_runs_are_not_planned():
    config, runs = _config(methods={"offrl": {"objective": "offrl"}})
    assert planned_figures(config, runs) == []
    config, runs = _config(curve_benchmarks=[], figures={"training_dynamics": {}, "targeted_ablations": {}})
    assert planned_figures(config, runs) == [("toy", "training_dynamics")]


@pytest.mark.parametrize("figures, message", [
    ({"no_such_figure": {}}, "figures: unknown figure 'no_such_figure'"),
    ({"training_dynamics": {"sft": "offrl"}}, "figures.training_dynamics.sft: unknown role"),
    ({"training_dynamics": {"fpa": "nope"}}, "figures.training_dynamics.fpa: unknown method 'nope'"),
])
def test_figure_config_errors_name_the_key(figures, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        _config(figures=figures)


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_draws_from_runs_and_records_them(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    config, runs = _config(figures={name: {}})
    slice_ = figure_slice(FIGURES[name], config, runs, "toy")
    write_stages("toy")
    for method in slice_["roles"].values():
        for seed in config["seeds"]:
            write_run("toy", method, seed)
            if FIGURES[name].analysis:
                write_analysis(FIGURES[name].analysis, "toy", method, seed)
    subprocess.run([sys.executable, "-m", "fpa", "figure", "--name", name, "--config-json", json.dumps(slice_),
                    "--out-png", "fig.png", "--out-pdf", "fig.pdf"], check=True, capture_output=True)
    assert (tmp_path / "fig.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "fig.pdf").read_bytes()[:4] == b"%PDF"
    record = read_json(tmp_path / "fig.png.prov.json")
    drawn = set(record["inputs"])
    for method in slice_["roles"].values():
        if FIGURES[name].uses_metrics:
            assert {TRAINING_METRICS.format(model="toy", method=method, seed=1), TRAINING_METRICS.format(model="toy", method=method, seed=2)} <= drawn
        if FIGURES[name].uses_evals:
            assert EVALUATION.format(model="toy", method=method, seed=2, bench="toy6") in drawn
        if FIGURES[name].uses_curves:
            assert {CURVE.format(model="toy", method=method, seed=2), CURVE.format(model="toy", method="base", seed=1)} <= drawn
        if FIGURES[name].analysis:
            assert ANALYSIS[FIGURES[name].analysis].format(model="toy", method=method, seed=2) in drawn
    assert record["caption"] == FIGURES[name].caption


def test_curves_align_seeds_and_prepend_the_base(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for seed in (1, 2):
        write_run("toy", "offrl", seed)
    steps, values = data.read_curves([CURVE.format(model="toy", method="offrl", seed=s) for s in (1, 2)], "toy6",
                                  [CURVE.format(model="toy", method="base", seed=s) for s in (1, 2)])
    assert list(steps) == [0, 10, 20, 30, 40]
    assert values.shape == (2, 5)
    assert values[0, 0] == 50.0 and values[1, 4] == pytest.approx(100 * (0.5 + 0.2 + 0.02))


def test_analysis_figures_are_planned_only_with_their_settings():
    figures = {"future_policy_validation": {}, "gradient_entanglement": {}}
    config, runs = _config(figures=figures)
    assert planned_figures(config, runs) == [("toy", "future_policy_validation"), ("toy", "gradient_entanglement")]
    assert figure_slice(FIGURES["gradient_entanglement"], config, runs, "toy")["roles"] == {"base": "base"}
    assert figure_slice(FIGURES["future_policy_validation"], config, runs, "toy")["roles"] == {"offrl": "offrl"}
    config, runs = _config(figures=figures, future_policy={})
    assert planned_figures(config, runs) == [("toy", "gradient_entanglement")]
    with pytest.raises(ConfigError, match="future_policy.target_steps: expected steps after anchor_step 10"):
        _config(future_policy={"anchor_step": 10, "target_steps": [10]})


def test_lambda_sensitivity_draws_the_fpa_sweep_and_offrl_at_zero():
    config, runs = _config(methods={"offrl": {"objective": "offrl"}, "sft": {"objective": "sft"},
                                    "fpa": {"objective": "fpa", "sweep": {"lam": [0.5, 2]}}},
                           figures={"lambda_sensitivity": {}})
    slice_ = figure_slice(FIGURES["lambda_sensitivity"], config, runs, "toy")
    assert slice_["roles"] == {"offrl": "offrl", "fpa_lam0.5": "fpa_lam0.5", "fpa_lam2": "fpa_lam2"}
    assert slice_["lam"] == {"offrl": 0.0, "fpa_lam0.5": 0.5, "fpa_lam2": 2.0}
    assert slice_["benchmarks"] == ["toy6"]
    # a config naming methods draws only those (a swept method stands for its runs)
    config["methods"]["offrl_long"] = {"objective": "offrl"}
    config["figures"]["lambda_sensitivity"] = {"zero": "offrl", "sweep": "fpa"}
    slice_ = judge_config(config).figures.slice("toy", "lambda_sensitivity")
    assert set(slice_["roles"]) == {"offrl", "fpa_lam0.5", "fpa_lam2"}


PLAN_FIGURES = """
import json, sys, yaml
from fpa.planning import judge_config
from fpa.figures import FIGURES
from fpa.planning.figures import dag_inputs, figure_slice, planned_figures
plan = judge_config(yaml.safe_load(open(sys.argv[1])), where=sys.argv[1])
config, runs = plan.config, plan.runs
inputs = [dag_inputs(name, figure_slice(FIGURES[name], config, runs, model))
          for model, name in planned_figures(config, runs)]
print(json.dumps({"heavy": sorted(m for m in ("pandas", "matplotlib", "torch") if m in sys.modules),
                  "figures": len(inputs), "inputs": sum(map(len, inputs))}))
"""


def test_planning_figures_imports_no_plotting_or_table_packages():
    """The Snakefile plans figures at parse time; reading them is the figure job's work."""
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", PLAN_FIGURES, str(root / "config" / "config.yaml")],
                            capture_output=True, text=True, timeout=300, cwd=root, check=True)
    report = json.loads(result.stdout)
    assert report["heavy"] == [] and report["figures"] == 4 and report["inputs"] > 0, report


def test_wall_clock_starts_offline_runs_after_their_data_and_online_runs_at_zero(tmp_path, monkeypatch):
    from fpa.figures.inputs import figure_inputs
    from fpa.figures.wall_clock import clock_curves, time_to_accuracy

    monkeypatch.chdir(tmp_path)
    config, runs = _config(methods={"offrl": {"objective": "offrl", "label": "Off-RL"}, "fpa": {"objective": "fpa"},
                                    "sft": {"objective": "sft"}, "grpo": {"online": "grpo", "label": "GRPO"}},
                           figures={"wall_clock": {}})
    slice_ = figure_slice(FIGURES["wall_clock"], config, runs, "toy")
    assert slice_["roles"] == {"offrl": "offrl", "fpa": "fpa", "grpo": "grpo"}  # its objectives, not SFT
    assert slice_["stages"] == {"offrl": [TRAIN_SPLIT.format(model="toy")],  # Off-RL reads the cache for diagnostics only
                                "fpa": [TRAIN_SPLIT.format(model="toy"), REFERENCE_CACHE.format(model="toy")], "grpo": []}
    write_stages("toy")
    for method in slice_["roles"].values():
        for seed in config["seeds"]:
            write_run("toy", method, seed)
    inputs = figure_inputs("wall_clock", slice_)
    curves = clock_curves(inputs)
    # steps 0 (the base model), 10, ..., 40 at 2 s per step after the run's pre-training stages
    for role, start in {"offrl": 110.0, "fpa": 130.0, "grpo": 0.0}.items():
        seconds, accuracy = curves[role]
        assert seconds.tolist() == [[start + 2.0 * step for step in (0, 10, 20, 30, 40)]] * 2
        assert accuracy[:, 0].tolist() == [50.0, 50.0]
    table = time_to_accuracy(inputs).set_index("run")
    (target,) = [column for column in table.columns if column.startswith("h_to_")]  # every run peaks alike
    assert table[target].to_dict() == pytest.approx({"offrl": 190 / 3600, "fpa": 210 / 3600, "grpo": 80 / 3600})
    assert table["start_h"].to_dict() == pytest.approx({"offrl": 110 / 3600, "fpa": 130 / 3600, "grpo": 0.0})
    assert table.loc["offrl", "method"] == "Off-RL"


def test_a_figure_table_is_written_with_its_provenance(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config, runs = _config(methods={"fpa": {"objective": "fpa"}, "grpo": {"online": "grpo"}}, figures={"wall_clock": {}})
    slice_ = figure_slice(FIGURES["wall_clock"], config, runs, "toy")
    write_stages("toy")
    for method in slice_["roles"].values():
        for seed in config["seeds"]:
            write_run("toy", method, seed)
    subprocess.run([sys.executable, "-m", "fpa", "figure-table", "--name", "wall_clock", "--config-json",
                    json.dumps(slice_), "--out-csv", "t.csv", "--out-md", "t.md", "--out-html", "t.html"],
                   check=True, capture_output=True)
    markdown = (tmp_path / "t.md").read_text()
    assert "(times in min)" in markdown and "| fpa | fpa | 2 | 2.2 |" in markdown, markdown
    assert "| start_min | end_min |" in markdown and "min_to_" in markdown and "h_to_" not in markdown
    assert REFERENCE_CACHE.format(model="toy") in read_json(tmp_path / "t.csv.prov.json")["inputs"]
    assert "<table" in (tmp_path / "t.html").read_text() and (tmp_path / "t.html.prov.json").exists()


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_report_captions_are_clean_restructuredtext_that_reads_as_written(name):
    """Snakemake's report renders a figure's caption as reStructuredText: π^(1/|y|) must not become a
    substitution reference, nor a label's A*-PO an emphasis."""
    from docutils import nodes
    from docutils.core import publish_doctree

    from fpa.planning.figures import figure_caption

    figure = FIGURES[name]
    slice_ = {"model": "toy", "roles": {"offrl": "offrl", "fpa": "apo"}, "seeds": [1, 2],
              "labels": {"offrl": "Off-RL w/ |y|_", "fpa": "A*-PO"}}
    doctree = publish_doctree(figure_caption(figure, slice_), settings_overrides={"report_level": 5})
    assert not [node for node in doctree.findall() if isinstance(node, (nodes.system_message, nodes.problematic))]
    text = doctree.astext()
    assert figure.caption in text and "Off-RL w/ |y|_ (offrl), A*-PO (apo)" in text


def test_token_lengths_draw_each_dataset_of_the_pilot_not_the_answer_only_contrast(tmp_path, monkeypatch):
    from fpa.figures.inputs import figure_inputs
    from fpa.figures.token_lengths import draw

    monkeypatch.chdir(tmp_path)
    config, runs = _config(figures={"token_lengths": {}})
    slice_ = figure_slice(FIGURES["token_lengths"], config, runs, "toy")
    assert slice_["roles"] == {"base": "base"}
    for seed in config["seeds"]:
        write_analysis("entanglement", "toy", "base", seed)
    (ax,) = draw(figure_inputs("token_lengths", slice_)).axes
    # per dataset both trajectories of 5 pairs x 2 seeds; the full trajectories' lengths are 60 and 60..64
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["full trajectories (median 60 tokens, n = 20)", "IMDb (median 1 tokens, n = 20)"]
