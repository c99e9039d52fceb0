"""Column headers from ``benchmarks.<b>.label`` (e.g. ``MBPP+``); cells are keyed by header."""

from __future__ import annotations

from fpa.aggregation.tables import EvalResult, summarise, to_latex, to_markdown


def test_labels_become_headers_and_cell_keys():
    values = {(1, "mbppplus"): 0.5, (1, "lcb"): 0.1, (2, "mbppplus"): 0.6, (2, "lcb"): 0.2}
    results = [EvalResult("m", "fpa", seed, bench, value, f"{seed}/{bench}", "0" * 64)
               for (seed, bench), value in values.items()]
    table, cells = summarise(results, benchmarks=["mbppplus", "lcb"], methods=["fpa"], models=["m"],
                             labels={"mbppplus": "MBPP+"})
    assert list(table.columns) == ["MBPP+", "lcb", "Avg."]
    assert set(cells["fpa"]) == {"MBPP+", "lcb", "Avg."}
    assert cells["fpa"]["MBPP+"]["sources"][0]["files"] == ["1/mbppplus"]
    assert "| method | MBPP+ | lcb | Avg. |" in to_markdown(table, "code")
    assert r"\textbf{MBPP+}" in to_latex(table, "code")
