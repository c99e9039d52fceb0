"""The configs the config fuzz judges (benchmarks/hostile_input/fuzz_config.py): generated from the schema
(workflow/schemas/config.schema.yaml) over the default config, then mutated: wrong types, unknown and
missing keys, non-string and duplicate keys, deep nests, unicode names, huge numbers, empty parts,
alias bombs. ``configs()`` draws ``(config, text edits)``; ``config_text`` writes them as YAML."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
from fpa.config.schema import load_schema  # noqa: E402

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


@st.composite
def configs(draw) -> tuple[dict, list[str]]:
    """A config (the default one, mutated one to three times) and the text edits its YAML then gets."""
    config, edits = json.loads(json.dumps(BASE)), []
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(config))
        kind = draw(st.sampled_from(["schema", "schema", "any", "delete", "unknown_key", "non_string_key",
                                     "deep", "empty", "rename", "duplicate", "alias_bomb"]))
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
    return config, edits


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


def config_text(config: dict, edits: list[str]) -> str:
    """The YAML of ``config`` with the values the dumper cannot write substituted, then ``edits``."""
    text = yaml.safe_dump(config, allow_unicode=True, sort_keys=False, width=10 ** 6)
    text = re.sub(r"'?__deep_(\d+)__'?", lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), text)
    text = re.sub(r"'?__big_(\d+)__'?", lambda m: "9" * int(m.group(1)), text)
    for edit in edits:
        if edit == "duplicate":  # the first top-level key once more (the loader keeps the last)
            first = re.search(r"^(\w+):", text, re.MULTILINE)
            text += f"{first.group(1)}: {{}}\n" if first else ""
        elif edit == "alias_bomb":  # "billion laughs": 9^9 values in about 500 bytes
            bomb = ["bomb0: &b0 [x, x, x, x, x, x, x, x, x]"]
            bomb += [f"bomb{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 9)}]" for i in range(1, 10)]
            text = "\n".join(bomb) + "\n" + text
    return text
