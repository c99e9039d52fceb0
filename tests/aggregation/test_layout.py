"""Table layouts from config: rows, sweeps as blocks, marks, seeds as rows, the models × runs
shape, and one-line errors naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fpa.aggregation.grid import layout_from_json
from fpa.aggregation.layout import build_layout, table_benchmarks
from fpa.errors import ConfigError
from fpa.planning import judge, judge_config


def _config(tables, methods=None, models=("toy",)):
    plan = judge_config({
        "models": {m: {"source": "toy", "prompt_template": "Q: {problem}\nA:"} for m in models},
        "benchmarks": {"toy6": {"source": "toy", "n_problems": 4, "label": "Toy-6"},
                       "toy8": {"source": "toy", "n_problems": 4}},
        "methods": methods or {
            "offrl": {"objective": "offrl", "label": "Off-RL"},
            "fpa": {"objective": "fpa", "label": "w/ FPA", "params": {"lam": 2}},
            "fpa_sweep": {"objective": "fpa", "label": "FPA", "sweep": {"lam": [0.5, 2]}},
            "dpo": {"objective": "dpo", "label": "DPO", "sweep": {"lr": [1e-6, 5e-6]}},
        },
        "tables": tables,
        "seeds": [42, 43],
    })
    return plan.config, plan.runs


def _rows(layout):
    return [(block.title, [(row.key, row.label, row.indent, row.highlight, row.dagger) for row in block.rows])
            for block in layout.blocks]


def test_a_list_is_the_columns_with_every_run_as_a_row():
    config, runs = _config({"main": ["toy6", "toy8"]})
    layout = build_layout("main", config["tables"]["main"], config, runs)
    assert layout.columns == ("Toy-6", "toy8", "Avg.")
    keys = [row.key for row in layout.blocks[0].rows]
    assert keys == ["base", "offrl", "fpa", "fpa_sweep_lam0.5", "fpa_sweep_lam2", "dpo_lr1e-06", "dpo_lr5e-06"]
    assert len(layout.cell_keys()) == 6 * 2  # fpa_sweep_lam2 is trained as fpa (λ = 2): its cells read fpa's files


def test_rows_labels_highlight_and_indent_as_the_ablation_table():
    config, runs = _config({"ablation": {"columns": ["toy6"], "caption": "Ablations",
                                         "rows": ["base", "offrl", {"run": "fpa", "indent": True}],
                                         "highlight": ["fpa"]}})
    layout = build_layout("ablation", config["tables"]["ablation"], config, runs)
    assert _rows(layout) == [(None, [("base", "Base", False, False, False), ("offrl", "Off-RL", False, False, False),
                                     ("fpa", "w/ FPA", True, True, False)])]
    assert layout.caption == "Ablations"


def test_sweeps_become_blocks_with_dagger_on_the_main_tables_member():
    tables = {"main": {"columns": ["toy6"], "rows": ["offrl", "fpa_sweep_lam2", "dpo_lr5e-06"]},
              "tuning": {"columns": ["toy6", "toy8"], "rows": ["dpo", "fpa_sweep"], "group_by": "sweep",
                         "dagger_from": ["main"]}}
    config, runs = _config(tables)
    layout = build_layout("tuning", config["tables"]["tuning"], config, runs)
    assert _rows(layout) == [
        ("DPO — η", [("dpo_lr1e-06", "η = 1e-06", True, False, False), ("dpo_lr5e-06", "η = 5e-06", True, False, True)]),
        ("FPA — λ", [("fpa_sweep_lam0.5", "λ = 0.5", True, False, False), ("fpa_sweep_lam2", "λ = 2", True, False, True)]),
    ]
    assert runs[("toy", "dpo_lr5e-06")].training["lr"] == 5e-6  # a learning-rate sweep sets the run's lr


def test_seeds_each_adds_a_row_per_seed_and_models_make_blocks():
    config, runs = _config({"seeds": {"columns": ["toy6"], "rows": ["offrl"], "seeds": "each"}}, models=("a", "b"))
    layout = build_layout("seeds", config["tables"]["seeds"], config, runs)
    assert [(b.title, [(r.key, r.label, r.seed) for r in b.rows]) for b in layout.blocks] == [
        ("a", [("a/offrl", "Off-RL", None), ("a/offrl@42", "Seed 42", 42), ("a/offrl@43", "Seed 43", 43)]),
        ("b", [("b/offrl", "Off-RL", None), ("b/offrl@42", "Seed 42", 42), ("b/offrl@43", "Seed 43", 43)]),
    ]


def test_models_by_run_puts_models_in_rows_and_runs_in_columns():
    config, runs = _config({"lambda_val": {"layout": "models_by_run", "benchmark": "toy8",
                                           "columns": ["fpa_sweep_lam0.5", "fpa_sweep_lam2"]}}, models=("a", "b"))
    layout = build_layout("lambda_val", config["tables"]["lambda_val"], config, runs)
    assert layout.corner == "Model" and layout.columns == ("λ = 0.5", "λ = 2")
    assert [row.key for row in layout.blocks[0].rows] == ["a", "b"]
    assert [cell[0].method for cell in layout.blocks[0].rows[1].cells] == ["fpa_sweep_lam0.5", "fpa"]  # λ = 2 is fpa


def test_a_model_sweeps_and_seeds_its_own_and_other_models_print_a_dash():
    """``models.<m>.sweep`` and ``.seeds`` (the paper's λ = 20 and three seeds on one model): the
    other model's cell of that run is "-", as the paper prints it, and reads nothing."""
    from fpa.aggregation.tables import EvalResult, fill, to_markdown

    tables = {"lambda_val": {"layout": "models_by_run", "benchmark": "toy8",
                             "columns": ["fpa_sweep_lam0.5", "fpa_sweep_lam20"]}}
    plan = judge_config({
        "models": {"a": {"source": "toy", "sweep": {"fpa_sweep": {"lam": [0.5, 20]}}, "seeds": {"fpa_sweep": [42, 43]}},
                   "b": {"source": "toy"}},
        "benchmarks": {"toy8": {"source": "toy", "n_problems": 4}},
        "methods": {"fpa_sweep": {"objective": "fpa", "label": "FPA", "sweep": {"lam": [0.5]}}},
        "tables": tables, "seeds": [42]})
    config, runs = plan.config, plan.runs
    assert {key: run.seeds for key, run in runs.items()} == {
        ("a", "fpa_sweep_lam0.5"): (42, 43), ("a", "fpa_sweep_lam20"): (42, 43), ("b", "fpa_sweep_lam0.5"): (42,)}
    layout = build_layout("lambda_val", tables["lambda_val"], config, runs)
    assert [len(cell) for row in layout.blocks[0].rows for cell in row.cells] == [1, 1, 1, 0]
    results = [EvalResult(key.model, key.method, seed, "toy8", 0.5, "x", "0" * 64)
               for key in layout.cell_keys() for seed in key.seeds]
    assert "| b | **50.00** | - |" in to_markdown(layout, fill(layout, results))
    with pytest.raises(ConfigError, match=r"models.b.seeds: unknown methods \['nope'\]"):
        judge_config({**config, "models": {**config["models"], "b": {"source": "toy", "seeds": {"nope": [1]}}}})


@pytest.mark.parametrize("table, message", [
    ({"columns": ["toy6"], "rows": ["nope"]}, "tables.t.rows: 'nope' names no run"),
    ({"columns": ["toy7"]}, "tables.t.columns: unknown benchmark 'toy7'"),
    ({"columns": ["toy6"], "highlight": ["dpo"], "rows": ["offrl"]}, "tables.t.highlight: 'dpo' is not a row"),
    ({"columns": ["toy6"], "dagger_from": ["main"]}, "tables.t.dagger_from: expected other tables"),
    ({"layout": "models_by_run", "columns": ["offrl"]}, "tables.t.benchmark: expected one of"),
    ({"layout": "models_by_run", "benchmark": "toy6", "columns": ["x"]}, "tables.t.columns: 'x' names no run"),
])
def test_errors_name_the_table_key(table, message):
    with pytest.raises(ConfigError, match=message):
        _config({"t": table})


def test_seeds_list_reads_only_those_seeds_and_names_a_run_without_them():
    methods = {"offrl": {"objective": "offrl"}, "fpa": {"objective": "fpa", "seeds": [43]}}
    config, runs = _config({"t": {"columns": ["toy6"], "rows": ["base", "offrl"], "seeds": [42]}}, methods=methods)
    layout = build_layout("t", config["tables"]["t"], config, runs)
    assert {key.seeds for key in layout.cell_keys()} == {(42,)}
    with pytest.raises(ConfigError, match=r"tables.t.seeds: run 'fpa' of model 'toy' has seeds \[43\]; expected 42"):
        _config({"t": {"columns": ["toy6"], "rows": ["fpa"], "seeds": [42]}}, methods=methods)


def test_a_pass_at_k_column_reads_the_same_evaluation_with_its_metric():
    config, runs = _config({"t": {"columns": ["toy6", {"bench": "toy6", "metric": "pass@k", "k": 4}],
                                  "rows": ["offrl"], "average": False}})
    layout = build_layout("t", config["tables"]["t"], config, runs)
    assert layout.columns == ("Toy-6", "Toy-6 pass@4") and layout.column_keys == ("toy6", "toy6:pass@4")
    assert [(key.bench, key.metric) for key in layout.cell_keys()] == [("toy6", "pass@1"), ("toy6", "pass@4")]
    assert {layout.input_path(key, 42) for key in layout.cell_keys()} == {"results/eval/toy/offrl/42/toy6.json"}
    assert table_benchmarks(config["tables"]["t"]) == ["toy6"]


def test_a_paper_table_layout_survives_its_json_round_trip():
    """The aggregate rule passes the layout, the paper's cells included, as JSON."""
    layout = judge([Path(__file__).resolve().parents[2] / "config" / "paper.yaml"]).layouts["three_seeds"]
    assert len(layout.paper) == 96
    assert layout_from_json(json.loads(json.dumps(layout.to_json()))) == layout


@pytest.mark.parametrize("column, average, message", [
    ({"bench": "toy6", "metric": "pass@k", "k": 9}, False, r"tables.t.columns.k: expected an integer 1 <= k <= n = 8"),
    ({"bench": "toy6", "metric": "pass@k", "k": 2}, True, r"tables.t.average: the columns mix metrics"),
])
def test_pass_at_k_errors_name_the_key(column, average, message):
    with pytest.raises(ConfigError, match=message):
        _config({"t": {"columns": ["toy8", column], "rows": ["offrl"], "average": average}})
