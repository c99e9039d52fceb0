"""Strict YAML: duplicate keys refused by key path and both lines, syntax errors by line and column."""

from __future__ import annotations

import pytest
import yaml

from fpa.yaml_strict import YamlFileError, load_yaml


def _load(tmp_path, text: str | bytes):
    path = tmp_path / "file.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path, load_yaml(path)


def _refusal(tmp_path, text: str | bytes) -> str:
    with pytest.raises(YamlFileError) as info:
        _load(tmp_path, text)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_file_without_duplicates_reads_as_safe_load_reads_it(tmp_path):
    text = "a: &base {x: 1, y: [1, 2]}\nb:\n  <<: *base\n  x: 2\nc: *base\n1: int\n'1': str\n"
    path, loaded = _load(tmp_path, text)
    assert loaded == yaml.safe_load(text) and loaded["b"] == {"x": 2, "y": [1, 2]}  # a merge key overrides
    assert loaded[1] == "int" and loaded["1"] == "str"  # keys of different types are different keys
    assert _load(tmp_path, "")[1] is None


@pytest.mark.parametrize("text, message", [
    ("methods: {a: 1}\nseeds: [1]\nmethods: {b: 2}\n",
     "file.yaml:3:1: methods: duplicate key; expected each key once, got it at lines 1 and 3"),
    ("a:\n  b:\n    - {c: 1, c: 2}\n", "file.yaml:3:14: a.b.0.c: duplicate key; expected each key once, "
                                       "got it at lines 3 and 3"),
    ("a:\n  1: x\n  0x1: y\n", "file.yaml:3:3: a.1: duplicate key"),  # the same int, spelled twice
])
def test_a_duplicate_key_is_refused_by_path_and_lines(tmp_path, text, message):
    assert message in _refusal(tmp_path, text)


def test_a_syntax_error_names_line_and_column_without_a_traceback(tmp_path):
    message = _refusal(tmp_path, "a: 1\nseeds: [42, 43\n")
    assert message.endswith("file.yaml:3:1: invalid YAML: did not find expected ',' or ']' "
                            "(while parsing a flow sequence at line 2, column 8)"), message
    assert _refusal(tmp_path, "a: b: c\n").endswith("file.yaml:1:5: invalid YAML: mapping values are not allowed "
                                                    "in this context")


def test_bytes_that_are_not_utf8_name_the_file(tmp_path):
    assert "file.yaml: invalid YAML: 'utf-8' codec can't decode byte 0xff" in _refusal(tmp_path, b"a: \xff\n")
