"""The configs the config fuzz judges (``fuzz_config``): generated from the schema
(workflow/schemas/config.schema.yaml) over the default config, then mutated: wrong types, unknown and
missing keys, non-string and duplicate keys, deep nests, unicode names, huge numbers, empty parts,
alias bombs; and (issue 42) a top level that is not a mapping, every integer field of the schema at
its extremes, control and non-BMP characters in every string field, prompt templates with and
without their placeholder; and (issue 52) names that collide or break later: one run name made twice,
names at and one byte past their limit, names that end as the project's reserved files do, tables
named as the workflow's own, periodic names, braces in a path Snakemake reads, two rows or columns
alike (``name_examples`` makes them; ``name_configs()`` draws them alone); and settings valid one by one
whose jobs are certain to fail (``certain_failures.py``). ``configs()`` draws ``(config, text edits, mutation
kinds)``; ``config_text`` writes them as YAML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from hypothesis import strategies as st

from fpa.config.schema import ANY_ITEM, ANY_KEY, integer_fields, load_schema

from .certain_failures import certain_to_fail
from .name_examples import mutate_names

ROOT = Path(__file__).resolve().parents[2]
BASE = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
SCHEMA = load_schema()
# what the YAML text of a value is replaced with after dumping (the dumper cannot write them)
DEEP, BIG = "__deep_{}__", "__big_{}__"


# --- values from the schema, and values that are not -------------------------------------------------
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # any unicode but lone surrogates
NAMES = st.one_of(st.sampled_from(["..", ".", "-x", ".hidden", "a/b", "a b", "é", "x" * 300, "", "0", "toy"]),
                  st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,8}", fullmatch=True), TEXT)
NUMBERS = st.one_of(st.integers(), st.integers(-2 ** 80, 2 ** 80), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, -1, 1e308, -1e-308, 2 ** 63, 10 ** 300]),
                    st.integers(4000, 5000).map(BIG.format))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, NAMES)
ANY = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(NAMES, inner, max_size=3)), max_leaves=8)
#: the mappings whose keys become names (and path segments), and the top level
NAMED = [(), ("models",), ("methods",), ("benchmarks",), ("tables",)]
#: characters a string field gets: controls (C0, DEL, C1), line separators, non-BMP and combining ones
HOSTILE_CHARS = st.sampled_from(["\x00", "\x07", "\x0c", "\x1b", "\x7f", "\x85", "\u2028", "\ufeff", "\U0001F600",
                                 "\U0010FFFD", "\u0301", "\t", "\r\n"])
#: a prompt template: with its placeholder, without it, with others, with braces str.format chokes on
TEMPLATES = st.one_of(st.sampled_from(["Q: {problem}\nA:", "{problem}", "Q: {question}\nA:", "Q: {Problem}",
                                       "{problem} {foo}", "\\boxed{X} {problem}", "{{problem}}", "Q: {problem",
                                       "}{", "", "{problem}\x00"]),
                      st.tuples(TEXT, TEXT).map(lambda parts: parts[0] + "{problem}" + parts[1]), TEXT)
#: mappings and lists at the top level, as a careless file holds them
TOP_LEVELS = st.sampled_from([None] * 15 + ["list", "scalar", "null", "number", "list_of_config"])
NON_STRING_KEYS = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), st.floats(0, 2, allow_nan=False))


def from_schema(schema: dict, depth: int = 0) -> st.SearchStrategy:
    """Values of ``schema`` (its types, enums, bounds and properties), now and then any value at all."""
    if "$ref" in schema:
        return from_schema(SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]], depth)
    if "enum" in schema or "const" in schema:
        return st.sampled_from(schema.get("enum", [schema.get("const")]))
    if "oneOf" in schema:
        return st.one_of([from_schema(option, depth) for option in schema["oneOf"]])
    kinds = schema.get("type", ["object"] if "properties" in schema else [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    options = [_of_type(kind, schema, depth) for kind in kinds] or [ANY]
    return st.one_of(*options) if depth < 3 else st.one_of(*options, ANY)


def _of_type(kind: str, schema: dict, depth: int) -> st.SearchStrategy:
    if kind == "object":
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", {})
        values = from_schema(extra, depth + 1) if isinstance(extra, dict) and depth < 3 else ANY
        chosen = st.fixed_dictionaries({}, optional={key: from_schema(sub, depth + 1) for key, sub in props.items()}) \
            if props and depth < 3 else st.dictionaries(NAMES, values, max_size=3)
        return chosen
    if kind == "array":
        item = schema.get("items", {})
        return st.lists(from_schema(item, depth + 1) if depth < 3 else SCALARS, max_size=4)
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.one_of(st.integers(low, high), NUMBERS)
    if kind == "number":
        return st.one_of(st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False), NUMBERS)
    return {"string": st.one_of(TEXT, NAMES), "boolean": st.booleans(), "null": st.none()}[kind]


# --- mutations of the default config ---------------------------------------------------------------------
def _paths(node, prefix=()):
    """Every key path of ``node`` (mappings and lists)."""
    yield prefix
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, (*prefix, key))


def _subschema(path) -> dict:
    schema = SCHEMA
    for key in path:
        if "$ref" in schema:
            schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
        if isinstance(key, int):
            schema = schema.get("items", {})
        else:
            extra = schema.get("additionalProperties")
            schema = schema.get("properties", {}).get(key, extra if isinstance(extra, dict) else {})
    return schema


def _set(config, path, value):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


INTEGERS = integer_fields(SCHEMA)


def integer_extremes(node: dict) -> st.SearchStrategy:
    """An integer field's bounds, one past each, and what no consumer holds (int64, uint64, 10^30)."""
    low, high = node.get("minimum", 0), node.get("maximum", 2 ** 63)
    return st.sampled_from([low, low - 1, high, high + 1, 2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64, -2 ** 63, 10 ** 30])


def _instantiate(draw, config: dict, pattern: tuple) -> tuple | None:
    """A key path of ``config`` matching ``pattern`` (``*``: an existing entry, ``[]``: the first item),
    its missing mappings and lists created; None where a mutation before left no room for it."""
    node, path = config, []
    for index, key in enumerate(pattern):
        last = index == len(pattern) - 1
        if key == ANY_KEY:
            if not isinstance(node, dict) or not node:
                return None
            key = draw(st.sampled_from(sorted(node)))
        elif key == ANY_ITEM:
            if not isinstance(node, list):
                return None
            if not node:
                node.append(None if last else {})
            key = 0
        elif not isinstance(node, dict):
            return None
        elif key not in node and not last:
            node[key] = [] if pattern[index + 1] == ANY_ITEM else {}
        path.append(key)
        if not last:
            node = node[key]
    return tuple(path)


def _string_paths(node, prefix=()):
    """Every key path of a string value in ``node``."""
    return [path for path in _paths(node, prefix) if path and isinstance(_mapping_value(node, path), str)]


def _mapping_value(node, path):
    for key in path:
        node = node[key]
    return node


@st.composite
def configs(draw) -> tuple[object, list[str], list[str]]:
    """A config (the default one, mutated one to three times), the text edits its YAML then gets, and
    the kinds of mutation it got."""
    config, edits, kinds = json.loads(json.dumps(BASE)), [], []
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(config))
        kind = draw(st.sampled_from(["schema", "schema", "any", "delete", "unknown_key", "non_string_key",
                                     "deep", "empty", "rename", "duplicate", "alias_bomb", "integer_extreme",
                                     "integer_extreme", "hostile_string", "template", "names", "certain_to_fail",
                                     "certain_to_fail"]))
        kinds.append(kind)
        if kind == "names":
            kinds[-1] = mutate_names(draw, config)
            continue
        if kind == "certain_to_fail":  # issue 52: certain_failures.py
            kinds[-1] = f"{kind}:{draw(certain_to_fail(config))}"
            continue
        if kind == "integer_extreme":
            pattern = draw(st.sampled_from(sorted(INTEGERS)))
            path = _instantiate(draw, config, pattern)
            if path is not None:
                _set(config, path, draw(integer_extremes(INTEGERS[pattern])))
            continue
        if kind == "hostile_string":
            strings = _string_paths(config)
            if strings:
                path = draw(st.sampled_from(strings))
                text = _mapping_value(config, path)
                at = draw(st.integers(0, len(text)))
                _set(config, path, text[:at] + draw(HOSTILE_CHARS) + text[at:])
            continue
        if kind == "template":
            for model in config["models"].values() if isinstance(config.get("models"), dict) else ():
                if isinstance(model, dict):
                    model["prompt_template"] = draw(TEMPLATES)
            continue
        named = kind in ("unknown_key", "non_string_key", "rename") and draw(st.booleans())
        path = draw(st.sampled_from(NAMED if named else paths))
        if kind in ("schema", "any", "deep", "empty") and path:
            value = {"schema": from_schema(_subschema(path)), "any": ANY,
                     "deep": st.sampled_from([10, 63, 64, 65, 300, 5000, 100_000]).map(DEEP.format),
                     "empty": st.sampled_from([{}, [], "", None])}[kind]
            _set(config, path, draw(value))
        elif kind == "delete" and path:
            _set_parent_without(config, path)
        elif kind in ("unknown_key", "non_string_key", "rename"):
            mapping = _mapping_at(config, path)
            if mapping is not None:
                key = draw(NON_STRING_KEYS if kind == "non_string_key" else NAMES)
                if kind == "rename" and mapping:
                    first = next(iter(mapping))
                    mapping[key] = mapping.pop(first)
                else:
                    mapping[key] = draw(ANY)
        elif kind in ("duplicate", "alias_bomb"):
            edits.append(kind)
    top = draw(TOP_LEVELS)  # now and then a top level that is not a mapping
    if top is not None:
        kinds.append(f"top_level_{top}")
        config = {"list": list(config)[:3], "scalar": "experiment: toy", "null": None, "number": 42,
                  "list_of_config": [config]}[top]
    return config, edits, kinds


@st.composite
def name_configs(draw) -> tuple[dict, list[str], list[str]]:
    """The default config with one of ``name_examples.NAME_CLASSES`` done to it, as ``configs()`` draws."""
    config = json.loads(json.dumps(BASE))
    return config, [], [mutate_names(draw, config)]


def _mapping_at(config, path):
    """The mapping at ``path``, or None (a mutation before may have removed or replaced it)."""
    node = config
    for key in path:
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return None
    return node if isinstance(node, dict) else None


def _set_parent_without(config, path):
    parent = _mapping_at(config, path[:-1]) if path[:-1] or isinstance(config, dict) else None
    if parent is not None and path[-1] in parent:
        del parent[path[-1]]


def config_text(config: object, edits: list[str]) -> str:
    """The YAML of ``config`` with the values the dumper cannot write substituted, then ``edits``."""
    text = yaml.safe_dump(config, allow_unicode=True, sort_keys=False, width=10 ** 6)
    text = re.sub(r"'?__deep_(\d+)__'?", lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), text)
    text = re.sub(r"'?__big_(\d+)__'?", lambda m: "9" * int(m.group(1)), text)
    for edit in edits:
        if edit == "duplicate":  # the first top-level key once more (the loader keeps the last)
            first = re.search(r"^(\w+):", text, re.MULTILINE)
            text += f"{first.group(1)}: {{}}\n" if first else ""
        elif edit == "alias_bomb" and isinstance(config, dict):  # "billion laughs": 9^9 values in about 500 bytes
            bomb = ["bomb0: &b0 [x, x, x, x, x, x, x, x, x]"]
            bomb += [f"bomb{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 9)}]" for i in range(1, 10)]
            text = "\n".join(bomb) + "\n" + text
    return text
