"""Runs whose numbers are the paper's: evaluation files written as the evaluate rule writes them
(``score_completions``) with the Pass@1 the paper prints, aggregated by ``fpa aggregate`` with
config/paper.yaml's table layouts, show Δ 0 beside every printed cell and count as within in
``fpa reproduction``; one cell moved by a point is counted outside."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from fpa.aggregation.layout import build_layout
from fpa.aggregation.paper import PaperSource, load_paper_results
from fpa.cli import main
from fpa.evaluation.evaluate import score_completions
from fpa.generation.stops import Completion
from fpa.planning import judge

ROOT = Path(__file__).resolve().parents[2]
MODEL = "qwen3-4b-base"


def _evaluation(percent: float, n: int) -> dict:
    """An evaluation record with Pass@1 exactly ``percent`` %: N problems × n samples hold 10,000
    (n = 8) or 20,000 (n = 32) samples, so two decimals of a percent are whole samples."""
    problems = 20000 // n if n == 32 else 10000 // n
    correct = round(percent / 100 * problems * n)
    flat = ["1"] * correct + ["0"] * (problems * n - correct)
    completions = [[Completion(text, "stop", "<eos>") for text in flat[i * n:(i + 1) * n]] for i in range(problems)]
    records = [{"id": f"p{i}", "answer": "1"} for i in range(problems)]
    return score_completions(records, completions, n=n, grader=lambda pairs: [(c == a, "exact") for c, a in pairs])


def _constructed(tmp_path: Path, name: str, rows: list, shift: dict | None = None, config_name: str = "paper.yaml",
                 spread: float = 0.0):
    """Table ``name`` of ``config_name`` on ``rows`` (of qwen3-4b-base in config/paper.yaml), and its
    evaluation files holding the paper's values of the cells it is compared with (a seed row's for
    each seed; several seeds of a mean row: the value −``spread``, itself, +``spread``; ``shift``
    adds points to one cell)."""
    plan = judge([ROOT / "config" / config_name])
    config = plan.config
    spec = {**config["tables"][name], "rows": rows, "highlight": []}
    if config_name == "paper.yaml":
        spec["models"] = [MODEL]
    layout = build_layout(name, spec, config, plan.runs)
    source = PaperSource.of(spec["paper_results"])
    paper = load_paper_results(ROOT / source.file)[source.table or name]
    paths = []
    for key in layout.cell_keys():
        for offset, seed in zip((-spread, 0, spread) if len(key.seeds) == 3 else (0,), key.seeds):
            row = key.method if len(key.seeds) == 1 or spread else f"{key.method}@{seed}"
            column = (source.columns or {}).get(key.bench, key.bench)
            printed = paper.cells[(source.model or key.model, row, column)][1]
            percent = printed + offset + (shift or {}).get((row, key.bench), 0)
            path = tmp_path / "results" / "eval" / key.model / key.method / str(seed) / f"{key.bench}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(_evaluation(percent, config["benchmarks"][key.bench]["n"])))
            paths.append(str(path))
    return layout, sorted(set(paths))


def _aggregate(tmp_path: Path, layout, paths: list[str]) -> dict:
    out = tmp_path / "tables" / layout.name
    out.parent.mkdir(parents=True, exist_ok=True)
    main(["aggregate", *paths, "--name", layout.name, "--config-json", json.dumps(layout.to_json()),
          "--out-csv", f"{out}.csv", "--out-md", f"{out}.md", "--out-tex", f"{out}.tex", "--out-html", f"{out}.html",
          "--out-json", f"{out}.json"])
    with open(f"{out}.csv") as handle:
        return {row["row"]: row for row in csv.DictReader(handle)}


def _reproduction(tmp_path: Path, tables: list[str]) -> str:
    out = tmp_path / "tables" / "reproduction"
    main(["reproduction", *(str(tmp_path / "tables" / f"{t}.json") for t in tables),
          "--out-csv", f"{out}.csv", "--out-md", f"{out}.md", "--out-html", f"{out}.html"])
    return Path(f"{out}.md").read_text()


@pytest.mark.slow
def test_the_papers_numbers_reproduce_the_paper(tmp_path, capsys):
    main_table, main_paths = _constructed(tmp_path, "main", ["base", "offrl", {"run": "fpa", "label": "w/ FPA"}])
    seeds_table, seed_paths = _constructed(tmp_path, "three_seeds", [{"run": "fpa", "label": "FPA"}])
    rows = _aggregate(tmp_path, main_table, main_paths)
    assert rows["fpa"]["GSM8K"] == "91.60" and rows["fpa"]["GSM8K_paper"] == "91.60"
    assert {rows[r][f"{c}_delta"] for r in rows for c in main_table.columns} == {"0.00"}
    seed_rows = _aggregate(tmp_path, seeds_table, seed_paths)
    assert seed_rows["fpa"]["GSM8K"] == "90.35 ± 1.23" and seed_rows["fpa"]["GSM8K_paper"] == "90.35 ± 1.23"
    assert "| main | tab:main_results | 24 | no spread | 24 / 24 | 0 |" in _reproduction(tmp_path, ["main"])
    assert "| three_seeds | tab:multiseed | 32 | 8 / 8 | 24 / 24 | 0 |" in _reproduction(tmp_path, ["three_seeds"])
    assert "| **91.60** (paper 91.60, Δ +0.00) |" in (tmp_path / "tables" / "main.md").read_text()


@pytest.mark.slow
def test_a_cell_a_point_off_the_paper_counts_outside(tmp_path):
    layout, paths = _constructed(tmp_path, "main", ["base", "offrl"], shift={("offrl", "gsm8k"): -1})
    rows = _aggregate(tmp_path, layout, paths)
    assert rows["offrl"]["GSM8K"] == "85.80" and rows["offrl"]["GSM8K_delta"] == "-1.00"
    assert rows["offrl"]["Avg._delta"] == "-0.14"  # the point, over 7 benchmarks
    summary = _reproduction(tmp_path, ["main"])
    assert "| main | tab:main_results | 16 | no spread | 14 / 16 | 2 | 1.00 |" in summary
    assert "(paper 86.80, Δ −1.00)" in (tmp_path / "tables" / "main.md").read_text()


@pytest.mark.slow
def test_a_toy_table_read_against_the_papers_through_a_mapping(tmp_path):
    """config/toy-paper.yaml's main table maps toy8/9/10 to the paper's Qwen2.5-Math-7B MATH500,
    OlympiadBench and AIME: runs with those numbers (± 1 point over three seeds) show Δ 0 within
    the seed spread; the toy's Avg., which the paper does not print, gets no comparison."""
    layout, paths = _constructed(tmp_path, "toy_paper_main", ["base", "offrl", "fpa"], config_name="toy-paper.yaml",
                                 spread=1.0, shift={("fpa", "toy10"): 5.0})
    rows = _aggregate(tmp_path, layout, paths)
    assert rows["fpa"]["toy8"] == "72.55 ± 1.00" and rows["fpa"]["toy8_paper"] == "72.55"  # the paper's MATH500
    assert rows["offrl"]["toy9_delta"] == "0.00" and rows["fpa"]["toy10_delta"] == "5.00"
    assert rows["fpa"]["Avg._paper"] == rows["fpa"]["Avg._delta"] == ""
    summary = _reproduction(tmp_path, ["toy_paper_main"])
    assert "| toy_paper_main | tab:main_results | 9 | 8 / 9 | n/a | 1 | 5.00 |" in summary, summary
