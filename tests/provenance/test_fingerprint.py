"""Code fingerprints follow static imports inside fpa, not the registry's run-time imports, and read code,
not comments or docstrings."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import fpa
from fpa.objectives import OBJECTIVES, module_of
from fpa.provenance.fingerprint import code_fingerprint, code_text, module_closure


def test_training_closure_excludes_method_modules():
    closure = module_closure("fpa.training.loop")
    assert "fpa.objectives.base" in closure
    method_modules = {module_of(name) for name in OBJECTIVES}
    assert not method_modules & set(closure), method_modules & set(closure)


def test_method_closure_follows_its_own_imports():
    assert "fpa.objectives.offrl" in module_closure("fpa.objectives.fpa")
    assert "fpa.objectives.dpo" in module_closure("fpa.objectives.rpo")
    assert "fpa.objectives.dpo" not in module_closure("fpa.objectives.fpa")


def test_fingerprints_differ_per_method_and_are_stable():
    fpa = code_fingerprint("fpa.training.loop", module_of("fpa"))
    offrl = code_fingerprint("fpa.training.loop", module_of("offrl"))
    assert fpa != offrl
    assert fpa == code_fingerprint("fpa.training.loop", module_of("fpa"))
    assert len(fpa) == 16


SOURCE = b'''"""A module's docstring,
on two lines: \xc3\xa9."""
import os  # why os

X = "not a docstring"  # a comment after code
TEMPLATE = """spaces\x20\x20\n\n\x20\x20
the blank line and spaces above are the string's"""  # this comment is not


class A:
    """A class's."""

    def f(self):
        """A method's, \xc3\xa9."""; return X  # code after a docstring stays
        # a comment of its own


def g():
    "only a docstring"
'''


def test_code_text_drops_comments_docstrings_and_blank_lines_and_keeps_the_code_as_written():
    assert code_text(SOURCE) == ('import os\n'
                                 'X = "not a docstring"\n'
                                 'TEMPLATE = """spaces  \n\n  \n'
                                 "the blank line and spaces above are the string's\"\"\"\n"
                                 'class A:\n'
                                 '    def f(self):\n'
                                 + " " * (8 + 20) + "; return X\n"  # the docstring's 20 characters blanked
                                 'def g():\n')
    assert code_text(SOURCE.replace(b"\n", b"\r\n")) == code_text(SOURCE)  # a checkout with CRLF
    assert code_text(b"\xef\xbb\xbf" + SOURCE) == code_text(SOURCE)  # with a BOM


def _code_tokens(text: str, *, docstrings: bool) -> list[tuple[int, str]]:
    """The tokens of ``text`` that are code: no comment, line break or indentation, nor (``docstrings``, of
    a source that parses) a docstring."""
    opening = {(node.body[0].lineno, node.body[0].col_offset) for node in ast.walk(ast.parse(text))
               if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
               and ast.get_docstring(node, clean=False) is not None} if docstrings else set()
    skipped = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
               tokenize.ENDMARKER}
    tokens = []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        byte_column = len(token.line[:token.start[1]].encode())  # the parser's columns are UTF-8 bytes
        if token.type in skipped or (token.type == tokenize.STRING and (token.start[0], byte_column) in opening):
            continue
        tokens.append((token.type, token.string))
    return tokens


def test_every_module_of_the_package_keeps_its_code_tokens_and_loses_its_comments_and_docstrings():
    """For every module of the package, by the tokenizer rather than by line positions: the code text holds
    exactly the source's code tokens, in order, and no comment."""
    modules = sorted(Path(fpa.__file__).parent.rglob("*.py"))
    assert len(modules) > 100
    for path in modules:
        source = path.read_bytes()
        text = code_text(source)
        assert _code_tokens(text, docstrings=False) == _code_tokens(source.decode(), docstrings=True), path
        assert not any(token.type == tokenize.COMMENT
                       for token in tokenize.generate_tokens(io.StringIO(text).readline)), path
