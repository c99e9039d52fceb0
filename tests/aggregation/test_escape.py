"""Every table writer prints a label as written, in its own cell, whatever it holds (issue 58): generated
labels of every character a format reserves, line breaks, look-alikes and symbols, as row labels, headers,
block titles and the caption, read back from the CSV, Markdown and HTML by a parser of the format, and
the LaTeX of a generated set compiled by pdflatex (``test_latex``'s document)."""

from __future__ import annotations

import csv
import io
import random
import subprocess
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from fpa.aggregation.escape import csv_text, LATEX_SYMBOLS, LATEX_TEXT, MARKDOWN_LINE_BREAK, MARKDOWN_RESERVED
from fpa.aggregation.grid import Block, CellKey, Layout, Row
from fpa.aggregation.tables import EvalResult, fill, to_csv, to_html, to_latex, to_markdown

from aggregation.test_latex import DOCUMENT, _pdflatex

#: what the labels are drawn from: each format's reserved characters, line breaks, invisible and
#: look-alike characters, the symbols the tables print, and plain letters
SPECIAL = "".join(sorted(MARKDOWN_RESERVED | set(LATEX_TEXT) | set(LATEX_SYMBOLS))) + "\"'!#$%@\n\r\t\u2028"
ALPHABET = SPECIAL + "aZ09 é-.\u200b\u00a0"
LABELS = st.text(st.sampled_from(ALPHABET), min_size=1, max_size=12)


def _table(labels: list[str], headers: list[str], title: str, caption: str):
    """A table of one block (titled ``title``) with a row per label and a column per header, filled."""
    rows = tuple(Row(f"r{i}", label, tuple((CellKey("m", f"r{i}", f"b{j}", (1,)),) for j in range(len(headers))),
                     highlight=i == 0, indent=i == 1) for i, label in enumerate(labels))
    layout = Layout("t", caption, "Method", tuple(headers), (Block(title, rows),), True,
                    column_keys=tuple(f"b{j}" for j in range(len(headers))))
    results = [EvalResult("m", f"r{i}", 1, f"b{j}", (i + j) / 10, "p", "0")
               for i in range(len(labels)) for j in range(len(headers))]
    return layout, fill(layout, results)


def _markdown_cells(line: str) -> list[str]:
    """The cells of a pipe-table row as a Markdown reader takes them: split at unescaped ``|``, then each
    ``<br>`` a line break and each backslash escape its character."""
    cells, current, escaped = [], "", False
    for char in line.strip()[1:-1]:
        if char == "|" and not escaped:
            cells.append(current)
            current = ""
            continue
        current += char
        escaped = char == "\\" and not escaped
    cells.append(current)
    return ["\n".join(_unescape(part) for part in cell.split(MARKDOWN_LINE_BREAK)).strip() for cell in cells]


def _unescape(text: str) -> str:
    out, index = "", 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text) and text[index + 1] in MARKDOWN_RESERVED:
            index += 1
        out += text[index]
        index += 1
    return out


def _as_lines(text: str) -> str:
    """``text`` as a Markdown reader gets it back: its lines, the cell's outer white space stripped."""
    return "\n".join(text.splitlines()).strip()


@settings(max_examples=150, deadline=None)
@given(st.lists(LABELS, min_size=2, max_size=4), st.lists(LABELS, min_size=1, max_size=3), LABELS)
def test_markdown_prints_each_label_in_its_own_cell(labels, headers, title):
    layout, filled = _table(labels, headers, title, "cap")
    lines = to_markdown(layout, filled).splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert _markdown_cells(table[0]) == ["Method", *map(_as_lines, headers)]
    assert _markdown_cells(table[2]) == [f"*{_as_lines(title)}*", *[""] * len(headers)]
    assert len(table) == 3 + len(labels)
    for index, (row, label) in enumerate(zip(table[3:], labels)):
        cells = _markdown_cells(row)
        assert len(cells) == len(headers) + 1, row
        shown = cells[0].removeprefix("**").removesuffix("**") if index == 0 else cells[0].removeprefix("&emsp;")
        assert shown == _as_lines(label), row  # row 0 is highlighted (bold), row 1 indented


class _Cells(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[list[str]] = []
        self.inside = False

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append("")
            self.inside = True

    def handle_endtag(self, tag):
        self.inside = self.inside and tag not in ("td", "th")

    def handle_data(self, data):
        if self.inside:
            self.rows[-1][-1] += data


@settings(max_examples=150, deadline=None)
@given(st.lists(LABELS, min_size=2, max_size=4), st.lists(LABELS, min_size=1, max_size=3), LABELS, LABELS)
def test_html_and_csv_print_each_label_as_written(labels, headers, title, caption):
    layout, filled = _table(labels, headers, title, caption)
    parser = _Cells()
    parser.feed(to_html(layout, filled))
    head, block, *rows = parser.rows  # as a browser shows them: white space collapsed
    assert list(map(_shown, head)) == ["Method", *map(_shown, headers)] and list(map(_shown, block)) == [_shown(title)]
    assert [_shown(row[0]) for row in rows] == list(map(_shown, labels)) and {len(row) for row in rows} == {
        len(headers) + 1}
    table = list(csv.reader(io.StringIO(to_csv(layout, filled))))  # line breaks read back as "\n"
    assert table[0][3:] == list(map(csv_text, headers)) and table[1][0] == csv_text(title)
    assert [row[2] for row in table[1:]] == list(map(csv_text, labels))


def _shown(text: str) -> str:
    return " ".join(text.split())


def test_latex_of_generated_labels_compiles_and_keeps_its_columns(tmp_path):
    pdflatex = _pdflatex()
    draw = random.Random(58)
    printable = ALPHABET.replace("\u200b", "")
    labels = [SPECIAL] + ["".join(draw.choice(printable) for _ in range(draw.randint(1, 12))) for _ in range(40)]
    layout, filled = _table(labels, [SPECIAL, "x^2 ~ y", "a&b|c\nd"], "t_1 & ^~", "50% of {all} #1 $")
    latex = to_latex(layout, filled)
    body = latex.split(r"\midrule", 1)[1]
    rows = [line for line in body.splitlines() if line.endswith(r"\\") and "multicolumn" not in line]
    assert len(rows) == len(labels)
    for row in rows:
        separators = [i for i, char in enumerate(row) if char == "&" and row[i - 1] != "\\"]
        assert len(separators) == 3, row  # a label holds no column separator
    (tmp_path / "table.tex").write_text(DOCUMENT % latex)
    result = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "table.tex"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:]
