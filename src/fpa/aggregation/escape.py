"""A config's text (labels, headers, captions, names) as each table format must write it to print as
written: whatever the format reserves escaped, so that no label shifts a cell into another column, ends
a row, or stops a compiler.

- Markdown (a GitHub pipe table): ``|`` would end the cell and a line break the row; the characters of
  inline markup (emphasis, code, links, HTML, entities, strikethrough) would format the text. Each
  is escaped with a backslash (but an ``_`` inside a word, which formats nothing), and a line break
  becomes ``<br>``.
- LaTeX: every special character (``\\ & % $ # _ { } ~ ^``) and those T1 prints as other glyphs in text
  (``< > |``) as a command that prints it; ``[ ] *`` braced, as a row's ``\\\\`` would read them at the start
  of the next row's label as its options; a line break (a blank line would end the row's paragraph)
  as a space; invisible characters (controls, format characters), which pdflatex cannot set, dropped;
  the symbols the tables print (±, †, λ, ...) in math mode.
- HTML: ``& < > " '`` as entities (the writers call ``html.escape``).
- CSV: the ``csv`` module quotes what it must, but not a lone carriage return where rows end in ``\n``,
  which a reader takes as the end of the row: line breaks are written ``\n``.
"""

from __future__ import annotations

import unicodedata

from fpa.labels import INVISIBLE_CATEGORIES

#: what inline Markdown gives a meaning to, each written after a backslash (CommonMark escapes any ASCII
#: punctuation so); ``|`` ends a pipe table's cell
MARKDOWN_RESERVED = frozenset("\\`*_[]<>|~&")
MARKDOWN_LINE_BREAK = "<br>"

LATEX_TEXT = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
              "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}",
              ">": r"\textgreater{}", "|": r"\textbar{}", "[": "{[}", "]": "{]}", "*": "{*}"}
LATEX_SYMBOLS = {"±": r"$\pm$", "†": r"$^{\dagger}$", "↑": r"$\uparrow$", "↓": r"$\downarrow$", "×": r"$\times$",
                 "λ": r"$\lambda$", "β": r"$\beta$", "α": r"$\alpha$", "τ": r"$\tau$", "η": r"$\eta$", "—": "---",
                 "Δ": r"$\Delta$", "−": "$-$"}


def markdown_text(text: str) -> str:
    """``text`` inside a Markdown table cell, caption or title: it prints as written, in one cell (its
    outer white space, which a cell drops anyway, stripped, so that ``**`` around it still bolds it)."""
    return MARKDOWN_LINE_BREAK.join(map(_markdown_line, text.strip().splitlines() or [""]))


def _markdown_line(line: str) -> str:
    return "".join("\\" + char if char in MARKDOWN_RESERVED and not _intraword_underscore(line, index) else char
                   for index, char in enumerate(line))


def _intraword_underscore(line: str, index: int) -> bool:
    """An ``_`` between two letters or digits, which opens and closes no emphasis (CommonMark), left as
    written, as names (``tab:main_results``) and symbols (``λ_w``) hold it."""
    return line[index] == "_" and 0 < index < len(line) - 1 and line[index - 1].isalnum() and \
        line[index + 1].isalnum()


def csv_text(text: str) -> str:
    """``text`` as a CSV field the ``csv`` module writes (rows ending in ``\n``) and reads back whole."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def latex_text(text: str) -> str:
    """``text`` in LaTeX text mode (a tabular cell, a caption), printed as written."""
    return "".join(LATEX_TEXT.get(char) or LATEX_SYMBOLS.get(char) or _latex_other(char) for char in text)


def _latex_other(char: str) -> str:
    if char.isspace():
        return " "  # a line break in a cell would end the row's paragraph
    return "" if unicodedata.category(char) in INVISIBLE_CATEGORIES else char
