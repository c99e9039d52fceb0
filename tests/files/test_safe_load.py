"""The loader with limits: duplicate and non-string keys, bombs, deep nests, huge numbers, each
refused in one line naming the file, the line and the limit; good files read as safe_load reads them."""

from __future__ import annotations

import json

import pytest
import yaml

from fpa.errors import ConfigError
from fpa.io import iter_jsonl, read_json
from fpa.safe_load import CONFIG_LIMITS, Limits, LoadError, load_json, load_yaml, parse_json


def _load(tmp_path, text: str | bytes, limits: Limits = CONFIG_LIMITS):
    path = tmp_path / "file.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return load_yaml(path, limits)


def _refusal(tmp_path, text: str | bytes, limits: Limits = CONFIG_LIMITS) -> str:
    with pytest.raises(LoadError) as info:
        _load(tmp_path, text, limits)
    assert "\n" not in str(info.value)
    return str(info.value)


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """"Billion laughs": ``width ** levels`` values in well under 1 KB."""
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + f"\nmodels: *a{levels}\n"


def test_a_good_file_reads_as_safe_load_reads_it(tmp_path):
    text = "a: &base {x: 1, y: [1, 2]}\nb:\n  <<: *base\n  x: 2\nc: *base\n'1': str\n"
    loaded = _load(tmp_path, text)
    assert loaded == yaml.safe_load(text) and loaded["b"] == {"x": 2, "y": [1, 2]}  # a merge key overrides
    assert _load(tmp_path, "") is None
    # with string keys not asked for, keys of different types are different keys
    assert _load(tmp_path, "1: int\n'1': str\n", Limits(string_keys=False)) == {1: "int", "1": "str"}


@pytest.mark.parametrize("text, message", [
    ("methods: {a: 1}\nseeds: [1]\nmethods: {b: 2}\n",
     "file.yaml:3:1: methods: duplicate key; expected each key once, got it at lines 1 and 3"),
    ("a:\n  b:\n    - {c: 1, c: 2}\n", "file.yaml:3:14: a.b.0.c: duplicate key; expected each key once, "
                                       "got it at lines 3 and 3"),
])
def test_a_duplicate_key_is_refused_by_path_and_lines(tmp_path, text, message):
    assert message in _refusal(tmp_path, text)


def test_the_same_int_spelled_twice_is_a_duplicate_where_int_keys_are_allowed(tmp_path):
    assert "file.yaml:3:3: a.1: duplicate key" in _refusal(tmp_path, "a:\n  1: x\n  0x1: y\n",
                                                           Limits(string_keys=False))


@pytest.mark.parametrize("key, shown", [("1", "1 (int)"), ("true", "True (bool)"), ("null", "None (NoneType)"),
                                        ("1.5", "1.5 (float)"), ("[a]", "a sequence"), ("{a: 1}", "a mapping")])
def test_a_key_that_is_not_a_string_is_refused_by_line(tmp_path, key, shown):
    message = _refusal(tmp_path, f"models:\n  toy: {{}}\n  ? {key}\n  : {{}}\n")
    assert message.endswith(f"file.yaml:3:5: models: key {shown} is not a string; expected a string key "
                            "(quote it)"), message
    assert _load(tmp_path, f"models:\n  '{key}': {{}}\n") == {"models": {key: {}}}  # quoted, it is one


def test_a_syntax_error_names_line_and_column_without_a_traceback(tmp_path):
    message = _refusal(tmp_path, "a: 1\nseeds: [42, 43\n")
    assert message.endswith("file.yaml:3:1: invalid YAML: did not find expected ',' or ']' "
                            "(while parsing a flow sequence at line 2, column 8)"), message
    assert _refusal(tmp_path, "a: b: c\n").endswith("file.yaml:1:5: invalid YAML: mapping values are not allowed "
                                                    "in this context")


def test_bytes_that_are_not_utf8_name_the_file_and_line(tmp_path):
    assert _refusal(tmp_path, b"a: 1\nb: \xff\n").endswith("file.yaml:2: not UTF-8: byte 0xff")


def test_an_alias_bomb_is_refused_at_the_alias_that_passes_the_limit(tmp_path):
    text = alias_bomb()
    assert len(text) < 1024
    message = _refusal(tmp_path, text)  # 9^9 values are never built (its time: docs/archive/benchmarks.md, config_bombs.py)
    assert message.endswith(f"file.yaml:7:10: more than the limit of {CONFIG_LIMITS.max_nodes} values with "
                            "aliases expanded (max_nodes)"), message
    assert _load(tmp_path, alias_bomb(levels=2)) is not None  # 9^2 values: fine


def test_aliases_count_their_depth_where_they_are_used(tmp_path):
    limits = Limits(max_depth=3)
    assert _load(tmp_path, "a: &a [[1]]\nb: *a\n", limits) == {"a": [[1]], "b": [[1]]}
    assert _refusal(tmp_path, "a: &a [[1]]\nb: [*a]\n", limits).endswith(
        "file.yaml:2:5: nested deeper than the limit of 3 levels (max_depth)")


def test_a_recursive_alias_is_refused(tmp_path):
    assert "file.yaml:1:11: alias *x refers to a node that is not complete" in _refusal(tmp_path, "a: &x [1, *x]\n")


@pytest.mark.parametrize("levels", [65, 3000, 100_000])
def test_a_deep_nest_is_refused_at_the_limit_whatever_its_depth(tmp_path, levels):
    text = "models:\n  toy: " + "[" * levels + "]" * levels + "\n"
    assert _refusal(tmp_path, text).endswith("file.yaml:2:70: nested deeper than the limit of 64 levels "
                                             "(max_depth)")
    assert _load(tmp_path, "a: " + "[" * 63 + "]" * 63 + "\n")  # 64 levels with the top mapping


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    assert _refusal(tmp_path, "a: 1\n" * 10, Limits(max_bytes=12)).endswith(
        "file.yaml:3: larger than the limit of 12 bytes (max_bytes)")


def test_a_number_python_cannot_hold_is_refused_by_line(tmp_path):
    message = _refusal(tmp_path, "seeds:\n  - " + "9" * 5000 + "\n")
    assert message.startswith(f"{tmp_path}/file.yaml:2:5: cannot read the value: Exceeds the limit (4300 digits)")


def test_json_records_are_read_with_limits(tmp_path):
    path = tmp_path / "record.json"
    path.write_text(json.dumps({"a": [1, {"b": None}]}))
    assert load_json(path) == read_json(path) == {"a": [1, {"b": None}]}
    for levels, line in [(65, 1), (100_000, 1)]:
        path.write_text("[" * levels + "]" * levels)
        with pytest.raises(LoadError, match=rf"record.json:{line}: nested deeper than the limit of 64 levels"):
            read_json(path)
    path.write_text('{"a":\n 1,}')
    with pytest.raises(LoadError, match=r"record.json:2: invalid JSON \(Expecting property name"):
        read_json(path)
    with pytest.raises(LoadError, match=r"^x.jsonl:3: cannot read the value: Exceeds the limit"):
        parse_json("9" * 5000, "x.jsonl:3")


def test_a_jsonl_line_nested_too_deep_names_its_line(tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_text('{"id": 1}\n' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(LoadError, match=r"bench.jsonl:2: nested deeper than the limit of 64 levels \(max_depth\)$"):
        list(iter_jsonl(path))


def test_a_key_with_line_breaks_is_quoted_on_one_line(tmp_path):
    """Found by the config fuzz: an unknown key "\\n" split check-config's refusal over two lines."""
    message = str(ConfigError("config.yaml: a\nb\u2028c\x85d\x1b[31m: unknown key"))
    assert message == "config.yaml: a\\nb\\u2028c\\x85d\\x1b[31m: unknown key" and len(message.splitlines()) == 1
    assert len(_refusal(tmp_path, 'models: {"a\\nb": 1, "a\\nb": 2}\n').splitlines()) == 1


@pytest.mark.parametrize("text, expected", [  # issue 42: JSON keeps the last of two equal keys, silently
    ('{"a": 1, "a": 2}', "f.jsonl:3: key 'a': twice in one object"),
    ('[{"b": 1}, {"c": {"d": 1, "e": 2, "d": 3}}]', "f.jsonl:3: key 'd': twice in one object"),
    ('{"p": "x\\ud800y"}', "f.jsonl:3: field 'p': a lone surrogate U+D800 at character 2"),
    ('{"p": {"q": [1, "\\uDFFF"]}}', "f.jsonl:3: field 'p.q.1': a lone surrogate U+DFFF at character 1"),
    ('"\\ude00\\ud83d"', "f.jsonl:3: field '<top level>': a lone surrogate U+DE00"),  # a pair in the wrong order
])
def test_a_key_twice_or_a_lone_surrogate_is_refused_in_one_line(text, expected):
    with pytest.raises(LoadError) as error:
        parse_json(text, "f.jsonl:3")
    assert str(error.value).startswith(expected) and "\n" not in str(error.value), error.value


def test_a_surrogate_pair_is_one_character_and_accepted():
    assert parse_json('{"p": "\\ud83d\\ude00", "q": "\\u00e9"}', "f") == {"p": "\U0001F600", "q": "\u00e9"}
