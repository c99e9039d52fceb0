"""benchmarks/default_run/claims.py: the toy's claims computed from the records' tables, and which hold on every CPU."""

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from default_run import claims  # noqa: E402


def _table(rows: dict[str, list[str]]) -> str:
    lines = ["**toy** (Pass@1 %)", "", "| Method | toy8 | toy10 |", "|---|:---:|:---:|"]
    return "\n".join([*lines, *(f"| {method} | {' | '.join(cells)} |" for method, cells in rows.items())]) + "\n"


INTEL = claims.parse_table(_table({"Base": ["70.00 ± 1.00", "**60.00 ± 0.00**"],
                                   "FPA": ["**74.00 ± 1.00**", "<u>59.00 ± 2.00</u>"]}))
AMD = claims.parse_table(_table({"Base": ["80.00 ± 3.00", "70.00 ± 1.00"], "FPA": ["81.00 ± 4.00", "72.00 ± 1.00"]}))


def test_marks_are_stripped_and_cells_read():
    assert INTEL == {"Base": {"toy8": (70.0, 1.0), "toy10": (60.0, 0.0)},
                     "FPA": {"toy8": (74.0, 1.0), "toy10": (59.0, 2.0)}}


def test_the_difference_in_pooled_standard_deviations():
    assert claims.difference(INTEL, "FPA", "Base", "toy8") == (4.0, 4.0)
    delta, pooled = claims.difference(AMD, "FPA", "Base", "toy8")
    assert delta == pytest.approx(1.0) and pooled == pytest.approx(1.0 / math.sqrt((9 + 16) / 2))
    assert claims.difference(INTEL, "FPA", "Base", "toy10")[1] == pytest.approx(-1 / math.sqrt(2))


def test_what_holds_on_every_cpu_and_where_the_sign_differs():
    spec = {"comparisons": [["FPA", "Base"]]}
    lines = claims.summary(spec, {"intel": INTEL, "amd": AMD}, {"intel": "Xeon", "amd": "EPYC"})
    assert lines == ["On every CPU of the records (Xeon and EPYC): FPA is above Base on toy8.",
                     "By at least 2 pooled std on every CPU: none.",  # 4.0 on the Xeon, 0.28 on the EPYC
                     "The sign differs between CPUs: FPA − Base on toy10 (Xeon -1.00, EPYC +2.00)."]
    alone = claims.summary(spec, {"intel": INTEL}, {"intel": "Xeon"})
    assert alone[1] == "By at least 2 pooled std on every CPU: FPA is above Base on toy8."


def test_a_cell_without_a_std_is_refused():
    with pytest.raises(ValueError, match=r"row Base: expected cells 'mean ± std'"):
        claims.parse_table(_table({"Base": ["70.00", "60.00 ± 0.00"]}))
