"""Table cells: mean ± sample std over seeds, Avg. per run then over seeds."""

from __future__ import annotations

import statistics

import pytest

from fpa.aggregation.tables import EvalResult, format_cell, summarise, to_latex, to_markdown


def test_format_cell_uses_sample_std_in_percent():
    assert format_cell([0.5, 0.7]) == f"60.00 ± {100 * statistics.stdev([0.5, 0.7]):.2f}"
    assert format_cell([0.5]) == "50.00"


def test_summarise_rows_columns_and_sources():
    values = {("a", 1, "x"): 0.2, ("a", 1, "y"): 0.4, ("a", 2, "x"): 0.3, ("a", 2, "y"): 0.5,
              ("b", 1, "x"): 0.6, ("b", 1, "y"): 0.6, ("b", 2, "x"): 0.8, ("b", 2, "y"): 0.8}
    results = [EvalResult("m", method, seed, bench, value, f"{method}/{seed}/{bench}", "0" * 64)
               for (method, seed, bench), value in values.items()]
    table, cells = summarise(results, benchmarks=["x", "y"], methods=["a", "b"], models=["m"])
    assert list(table.index) == ["a", "b"] and list(table.columns) == ["x", "y", "Avg."]
    assert cells["a"]["Avg."]["mean"] == pytest.approx(statistics.fmean([0.3, 0.4]))
    assert cells["a"]["Avg."]["std"] == pytest.approx(statistics.stdev([0.3, 0.4]))
    assert cells["b"]["x"]["sources"][1]["files"] == ["b/2/x"]
    assert len(cells["a"]["Avg."]["sources"][0]["files"]) == 2
    assert "| a |" in to_markdown(table, "t") and r"\pm" in to_latex(table, "t")


def test_missing_run_is_an_error():
    results = [EvalResult("m", "a", 1, "x", 0.2, "p", "0" * 64)]
    with pytest.raises(KeyError):
        summarise(results, benchmarks=["x", "y"], methods=["a"], models=["m"])
