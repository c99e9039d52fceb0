"""Filled tables: mean ± sample std over seeds, Avg. per run then over seeds, headers from labels,
and best / second-best marks as printed (ties share a mark) in Markdown, LaTeX and HTML."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace

import pytest

from fpa.aggregation.grid import Block, CellKey, Layout, Row
from fpa.aggregation.tables import (BEST, SECOND, EvalResult, cells_record, fill, format_cell, to_csv, to_html,
                                    to_latex, to_markdown)


def _layout(methods, benches, *, seeds=(1, 2), average=True, headers=None, blocks=None, **row_options):
    def row(method):
        cells = tuple((CellKey("m", method, b, tuple(seeds)),) for b in benches)
        if average:
            cells += (tuple(CellKey("m", method, b, tuple(seeds)) for b in benches),)
        return Row(method, method, cells, **row_options.get(method, {}))

    columns = tuple(headers or benches) + (("Avg.",) if average else ())
    blocks = blocks or [(None, methods)]
    return Layout("t", "Toy results", "Method", columns,
                  tuple(Block(title, tuple(map(row, names))) for title, names in blocks), True)


def _results(values):
    return [EvalResult("m", method, seed, bench, value, f"{method}/{seed}/{bench}", "0" * 64)
            for (method, seed, bench), value in values.items()]


def test_format_cell_uses_sample_std_in_percent():
    assert format_cell([0.5, 0.7]) == f"60.00 ± {100 * statistics.stdev([0.5, 0.7]):.2f}"
    assert format_cell([0.5]) == "50.00"


def test_avg_is_per_run_then_over_seeds_and_cells_keep_their_sources():
    values = {("a", 1, "x"): 0.2, ("a", 1, "y"): 0.4, ("a", 2, "x"): 0.3, ("a", 2, "y"): 0.5,
              ("b", 1, "x"): 0.6, ("b", 1, "y"): 0.6, ("b", 2, "x"): 0.8, ("b", 2, "y"): 0.8}
    layout = _layout(["a", "b"], ["x", "y"])
    cells = cells_record(layout, fill(layout, _results(values)))
    assert list(cells) == ["a", "b"] and list(cells["a"]) == ["x", "y", "Avg."]
    assert cells["a"]["Avg."]["mean"] == pytest.approx(statistics.fmean([0.3, 0.4]))
    assert cells["a"]["Avg."]["std"] == pytest.approx(statistics.stdev([0.3, 0.4]))
    assert cells["b"]["x"]["sources"][1]["files"] == ["b/2/x"]
    assert len(cells["a"]["Avg."]["sources"][0]["files"]) == 2


def test_headers_come_from_labels_and_the_cells_are_keyed_by_column():
    values = {("fpa", 1, "mbppplus"): 0.5, ("fpa", 1, "lcb"): 0.1, ("fpa", 2, "mbppplus"): 0.6, ("fpa", 2, "lcb"): 0.2}
    layout = replace(_layout(["fpa"], ["mbppplus", "lcb"], headers=["MBPP+", "MBPP+"]),
                     column_keys=("mbppplus", "lcb", "avg"))
    filled = fill(layout, _results(values))
    row = cells_record(layout, filled)["fpa"]  # two columns that print one header are two cells
    assert {key: cell["header"] for key, cell in row.items()} == {"mbppplus": "MBPP+", "lcb": "MBPP+", "avg": "Avg."}
    assert (row["mbppplus"]["mean"], row["lcb"]["mean"]) == (pytest.approx(0.55), pytest.approx(0.15))
    assert "| Method | MBPP+ | MBPP+ | Avg. |" in to_markdown(layout, filled)
    assert r"\textbf{MBPP+}" in to_latex(layout, filled)


def test_a_missing_evaluation_is_named():
    layout = _layout(["a"], ["x", "y"], seeds=(1,))
    with pytest.raises(ValueError, match="method 'a', seed 1, benchmark 'y'"):
        fill(layout, _results({("a", 1, "x"): 0.2}))


# one seed, so each printed cell is the value: per column, who is best and second is known
RANKED = {("a", "x"): 0.50, ("b", "x"): 0.70, ("c", "x"): 0.60, ("d", "x"): 0.70,  # x: b = d best, c second
          ("a", "y"): 0.10, ("b", "y"): 0.20, ("c", "y"): 0.30, ("d", "y"): 0.123449}  # y: c best, b second
EXPECTED = {"x": {"b": BEST, "d": BEST, "c": SECOND}, "y": {"c": BEST, "b": SECOND}}


def _ranked():
    layout = _layout(["a", "b", "c", "d"], ["x", "y"], seeds=(1,), average=False)
    return layout, fill(layout, _results({(m, 1, b): v for (m, b), v in RANKED.items()}))


def test_marks_follow_the_printed_ranking_with_ties_sharing():
    _, filled = _ranked()
    marks = {(r.row.key, column): c.mark for r in filled[0][1] for column, c in zip("xy", r.cells)}
    for column, expected in EXPECTED.items():
        assert {method: marks[(method, column)] for method in "abcd" if marks[(method, column)]} == expected


def test_markdown_latex_and_html_show_the_marks():
    layout, filled = _ranked()
    markdown = to_markdown(layout, filled)
    assert "| b | **70.00** | <u>20.00</u> |" in markdown
    assert "| d | **70.00** | 12.34 |" in markdown
    assert "| c | <u>60.00</u> | **30.00** |" in markdown
    assert "| a | 50.00 | 10.00 |" in markdown
    latex = to_latex(layout, filled)
    assert r"b & \textbf{70.00} & \underline{20.00} \\" in latex
    html = to_html(layout, filled)
    assert "<td>b</td><td><b>70.00</b></td><td><u>20.00</u></td>" in html


def test_marks_are_per_block_and_skip_per_seed_rows():
    values = {(m, 1, "x"): v for m, v in (("a", 0.1), ("b", 0.2), ("c", 0.9), ("d", 0.8))}
    layout = _layout(["a"], ["x"], seeds=(1,), average=False, blocks=[("one", ["a", "b"]), ("two", ["c", "d"])])
    filled = fill(layout, _results(values))
    marks = [[c.mark for r in rows for c in r.cells] for _, rows in filled]
    assert marks == [[SECOND, BEST], [BEST, SECOND]]
    markdown = to_markdown(layout, filled)
    assert "| *one* | |" in markdown and "| *two* | |" in markdown


def test_highlight_dagger_and_indent_render():
    values = {(m, 1, "x"): v for m, v in (("a", 0.1), ("b", 0.2))}
    layout = _layout(["a", "b"], ["x"], seeds=(1,), average=False,
                     b={"highlight": True, "indent": True}, a={"dagger": True})
    filled = fill(layout, _results(values))
    assert "| a † | <u>10.00</u> |" in to_markdown(layout, filled)
    assert "| &emsp;**b** | **20.00** |" in to_markdown(layout, filled)
    latex = to_latex(layout, filled)
    assert r"\rowcolor[gray]{0.92} \hspace{0.5em}\textbf{b} & \textbf{20.00} \\" in latex
    assert r"a $^{\dagger}$ &" in latex
    assert 'class="hl indent"' in to_html(layout, filled)
    assert to_csv(layout, filled).splitlines()[1] == ",a,a †,10.00"


def test_an_evaluation_file_gives_pass_at_1_and_the_unbiased_pass_at_k(tmp_path):
    from fpa.cli.tables import read_evaluation
    from fpa.evaluation.evaluate import score_completions
    from fpa.generation.stops import Completion

    # problem 1: 1 of 4 correct, problem 2: 2 of 4; pass@2 = 1 - C(3,2)/C(4,2) = 1/2, 1 - C(2,2)/C(4,2) = 5/6
    texts = [["1", "0", "0", "0"], ["1", "1", "0", "0"]]
    record = score_completions([{"id": "a", "answer": "1"}, {"id": "b", "answer": "1"}],
                               [[Completion(text, "stop", "<eos>") for text in row] for row in texts], n=4,
                               grader=lambda pairs: [(c == a, "exact") for c, a in pairs])
    path = tmp_path / "eval" / "m" / "fpa" / "42" / "toy6.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    results = {r.metric: r.value for r in read_evaluation(str(path), {"toy6": {"pass@1", "pass@2", "pass@4"}})}
    assert results == pytest.approx({"pass@1": 3 / 8, "pass@2": (1 / 2 + 5 / 6) / 2, "pass@4": 1.0}, abs=1e-15)


def test_a_compared_cell_shows_the_papers_value_and_delta_in_every_format():
    from dataclasses import replace

    from fpa.aggregation.grid import PaperCell

    layout = replace(_layout(["a", "b"], ["x"], seeds=(1, 2), average=False), column_keys=("x",),
                     paper=(PaperCell("a", "x", "41.00 ± 0.50", 41.0, 0.005),), paper_label="tab:t")
    filled = fill(layout, _results({("a", 1, "x"): 0.40, ("a", 2, "x"): 0.41, ("b", 1, "x"): 0.2, ("b", 2, "x"): 0.2}))
    comparison = filled[0][1][0].cells[0].comparison
    assert comparison["delta"] == pytest.approx(-0.5) and comparison["within"]  # |Δ| 0.5 <= std 0.71 + 0.005
    assert "| a | **40.50 ± 0.71** (paper 41.00 ± 0.50, Δ −0.50) |" in to_markdown(layout, filled)
    assert "<b>40.50 ± 0.71</b> (paper 41.00 ± 0.50, Δ −0.50)</td>" in to_html(layout, filled)
    assert r"{\footnotesize (paper 41.00 $\pm$ 0.50, $\Delta$ $-$0.50)}" in to_latex(layout, filled)
    assert to_csv(layout, filled).splitlines()[:3] == ["block,row,Method,x,x_paper,x_delta",
                                                       ",a,a,40.50 ± 0.71,41.00 ± 0.50,-0.50", ",b,b,20.00 ± 0.00,,"]


def test_the_report_caption_is_true_for_each_kind_of_table():
    from fpa.aggregation.tables import report_caption

    several = report_caption(_layout(["fpa"], ["toy8", "toy9"], seeds=(42, 43)), "toy")
    assert several.startswith("Table **toy**: Pass@1 %, mean ± sample std over seeds. Columns: toy8, toy9, Avg. ")
    assert ".." not in several and "paper" not in several
    single = report_caption(_layout(["fpa"], ["math500"], seeds=(42,), average=False), "main")
    assert "seed 42. Columns: math500. " in single and "std" not in single
