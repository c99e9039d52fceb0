"""Set keys of one entry of a block-style YAML file by editing its text, keeping everything else.

``fpa lock`` writes pins back into files people edit (``config/benchmarks.yaml``, the model
entries of a config): a dump would drop their comments, anchors and layout. This edits only
the lines of the keys it sets, at ``<section>:`` → ``  <name>:`` → ``    <key>: <value>``
(a mapping value becomes an indented block), and checks that the result parses to the
values it meant to write.
"""

from __future__ import annotations

import json
import re

import yaml

INDENT = 2


def set_entry_keys(text: str, where: str, section: str, name: str, values: dict) -> str:
    """``text`` with ``section.name.<key>`` set to each of ``values`` (scalars or flat mappings)."""
    lines = text.splitlines(keepends=True)
    start, end = _block(lines, where, [section, name])
    for key, value in values.items():
        rendered = _render(key, value, INDENT * 2)
        found = _child(lines, start, end, key, INDENT * 2)
        if found is None:
            lines[end:end] = rendered
        else:
            lines[found[0]:found[1]] = rendered
        start, end = _block(lines, where, [section, name])
    edited = "".join(lines)
    parsed = yaml.safe_load(edited)[section][name]
    for key, value in values.items():
        if parsed.get(key) != value:
            raise ValueError(f"{where}: {section}.{name}.{key}: the edit did not give {value!r}, "
                             f"got {parsed.get(key)!r}")
    return edited


def _indent(line: str) -> int | None:
    """Indentation of a line with content; None for blank and comment lines."""
    stripped = line.lstrip(" ")
    return None if not stripped.strip() or stripped.startswith("#") else len(line) - len(stripped)


def _closes(line: str, indent: int) -> bool:
    """A line with content at ``indent`` or less ends the block of a key at ``indent``."""
    depth = _indent(line)
    return depth is not None and depth <= indent


def _block(lines: list[str], where: str, path: list[str]) -> tuple[int, int]:
    """(first child line, end) of the block-style mapping at ``path``; end excludes trailing comments."""
    start, end = 0, len(lines)
    for depth, key in enumerate(path):
        pattern = re.compile(rf"^ {{{depth * INDENT}}}{re.escape(key)}:\s*(#.*)?$")
        head = next((i for i in range(start, end) if pattern.match(lines[i].rstrip("\n"))), None)
        if head is None:
            raise ValueError(f"{where}: {'.'.join(path[:depth + 1])}: expected a block-style mapping "
                             f"('{key}:' alone on its line at indent {depth * INDENT}), got none; edit it by hand")
        start = head + 1
        end = next((i for i in range(start, end) if _closes(lines[i], depth * INDENT)), end)
    while end > start and _indent(lines[end - 1]) is None:
        end -= 1
    return start, end


def _child(lines: list[str], start: int, end: int, key: str, indent: int) -> tuple[int, int] | None:
    """Line range of ``key``'s entry (with its nested lines) among the block's children."""
    pattern = re.compile(rf"^ {{{indent}}}{re.escape(key)}:")
    for i in range(start, end):
        if pattern.match(lines[i]):
            stop = next((j for j in range(i + 1, end) if _closes(lines[j], indent)), end)
            return i, stop
    return None


def _scalar(value) -> str:
    if value is None:
        return "null"
    text = str(value)
    try:
        plain = yaml.safe_load(f"k: {text}")["k"] == value
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text)


def _render(key: str, value, indent: int) -> list[str]:
    pad = " " * indent
    if not isinstance(value, dict):
        return [f"{pad}{_scalar(key)}: {_scalar(value)}\n"]
    return [f"{pad}{_scalar(key)}:\n"] + [f"{pad}{' ' * INDENT}{_scalar(k)}: {_scalar(v)}\n"
                                          for k, v in value.items()]
