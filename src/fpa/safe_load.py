"""YAML and JSON read with limits: every config, catalog, benchmark file and record is read here.

A hostile or careless file must not hang, crash or exhaust a tool that reads it, nor mean
something other than it seems. Each file is refused, with one line naming the file, the line
and the limit, when it is

- larger than ``Limits.max_bytes``;
- nested deeper than ``Limits.max_depth`` (the checks that walk a config recurse; Python's
  recursion ends in a traceback at a few thousand levels, libyaml's in a segmentation fault);
- more than ``Limits.max_nodes`` values once its YAML aliases are expanded (a 1 KB "billion
  laughs" file is 10^9 values to whatever walks it), or an alias refers to its own anchor;
- (YAML) a mapping with a key that is not a string (``1:``, ``true:``, ``null:``), when
  ``Limits.string_keys`` (JSON keys are always strings), or with the same key twice
  (PyYAML keeps the last, so a second ``methods:`` block would silently replace the first);
- a number Python cannot hold (an integer of more than 4300 digits), or not UTF-8;
- (JSON) an object with the same key twice (``json`` keeps the last, silently), or a string with a
  lone surrogate (a ``\\ud800`` escape without its pair: no UTF-8 encoder, so no tokenizer, takes it).

    load_yaml(path)                      # CONFIG_LIMITS: configs, catalogs, paper results
    load_json(path, RECORD_LIMITS)       # a JSON record
    parse_json(line, "file.jsonl:12")    # one JSONL line, named by where it is

The YAML limits are checked on libyaml's event stream before any node is built (one pass,
no recursion), so a bomb costs the time to read its bytes.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

import yaml

_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available
_MERGE_TAG = "tag:yaml.org,2002:merge"  # `<<: *anchor` overrides keys on purpose
_STR_TAG = "tag:yaml.org,2002:str"


@dataclass(frozen=True)
class Limits:
    """What a file read by this module may hold."""

    max_bytes: int = 16 << 20
    max_depth: int = 64  # nested mappings/lists, aliases expanded
    max_nodes: int = 1_000_000  # values (scalars, mappings, lists), aliases expanded
    string_keys: bool = True  # YAML mapping keys must be strings (JSON's always are)


#: configs, catalogs, the paper's results: written by people, read on every planning
CONFIG_LIMITS = Limits()
#: records the jobs write and read back, and benchmark files (one JSONL line each)
RECORD_LIMITS = Limits(max_bytes=4 << 30, max_depth=64, max_nodes=1 << 62)


#: what would end a line of a message or move a terminal's cursor (str.splitlines breaks at \x1c-\x1e,
#: \x85, \u2028 and \u2029 too): a key or value quoted in a message shows them escaped
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """``text`` with each control character and line separator escaped as Python writes it."""
    return _CONTROL.sub(lambda match: repr(match.group())[1:-1], text)


class OneLineError(ValueError):
    """An error whose ``str()`` is one line, whatever a hostile input put into its message."""

    def __init__(self, message: object = ""):
        super().__init__(one_line(str(message)))


class LoadError(OneLineError):
    """A file that cannot be read as meant, or breaks a limit; ``str()`` is one line naming the file."""


def load_yaml(path: str | os.PathLike, limits: Limits = CONFIG_LIMITS) -> object:
    """The document in ``path``; ``LoadError`` for a syntax error, a duplicate key or a broken limit."""
    text = _read_text(path, limits)
    try:
        _check_events(text, path, limits)
        return yaml.load(text, Loader=_loader(limits))
    except _Refused as refusal:
        raise LoadError(f"{_at(path, refusal.mark)}: {refusal.message}") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        context = f" ({error.context} at {_at(None, error.context_mark)})" \
            if error.context and error.context_mark else ""
        raise LoadError(f"{_at(path, mark)}: invalid YAML: {' '.join(str(error.problem).split())}{context}") \
            from None
    except yaml.YAMLError as error:
        raise LoadError(f"{path}: invalid YAML: {' '.join(str(error).split())}") from None


def scalar(text: str) -> object:
    """``text`` typed as a YAML scalar of a config file: ``2.0`` a float, ``true`` a boolean, ``null``
    None, anything else (a text YAML would read as a list or mapping, or cannot read) the text."""
    try:
        value = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError:
        return text
    return text if isinstance(value, (dict, list)) else value


def load_json(path: str | os.PathLike, limits: Limits = RECORD_LIMITS) -> object:
    """The JSON value in ``path``; ``LoadError`` for invalid JSON or a broken limit."""
    return parse_json(_read_text(path, limits), str(path), limits, whole_file=True)


def parse_json(text: str, where: str, limits: Limits = RECORD_LIMITS, *, whole_file: bool = False) -> object:
    """One JSON value (a JSONL line: ``where`` is ``file:line``); ``LoadError`` naming ``where``."""
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as duplicate:
        raise LoadError(f"{where}: key {duplicate.key!r}: twice in one object; expected each key once "
                        "(JSON keeps the last)") from None
    except json.JSONDecodeError as error:
        at = f"{where}:{error.lineno}" if whole_file else where
        raise LoadError(f"{at}: invalid JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:  # the C decoder's own bound (about 1000 levels): the same refusal as ours
        raise LoadError(_too_deep(text, where, limits, whole_file)) from None
    except ValueError as error:  # an integer of more digits than int() converts
        raise LoadError(f"{where}: cannot read the value: {' '.join(str(error).split(';')[0].split())}") from None
    if _depth_exceeds(value, limits.max_depth):
        raise LoadError(_too_deep(text, where, limits, whole_file))
    if _SURROGATE_ESCAPE.search(text):  # a pair is one character once read: only the escapes can leave one alone
        _check_no_lone_surrogate(value, where)
    return value


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """``json.loads``'s object hook: the object, or ``_DuplicateKey`` for its first repeated key."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(key for key, _ in pairs if key in seen or seen.add(key)))
    return value


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_no_lone_surrogate(value: object, where: str) -> None:
    """No string of ``value`` (key or value) holds a surrogate code point: one left after reading is alone."""
    pending = [(value, ())]
    while pending:
        node, path = pending.pop()
        if isinstance(node, dict):
            pending += [(key, (*path, "<key>")) for key in node] + [(child, (*path, key)) for key, child in node.items()]
        elif isinstance(node, list):
            pending += [(child, (*path, index)) for index, child in enumerate(node)]
        elif isinstance(node, str) and (found := _SURROGATE.search(node)):
            field = ".".join(map(str, path)) or "<top level>"
            raise LoadError(f"{where}: field {field!r}: a lone surrogate U+{ord(found.group()):04X} at character "
                            f"{found.start() + 1}; expected text a UTF-8 encoder takes (a \\ud800-\\udfff "
                            "escape only as half of a pair)")


def _read_text(path: str | os.PathLike, limits: Limits) -> str:
    with open(path, "rb") as handle:
        data = handle.read(limits.max_bytes + 1)
    if len(data) > limits.max_bytes:
        line = data.count(b"\n", 0, limits.max_bytes) + 1
        raise LoadError(f"{path}:{line}: larger than the limit of {limits.max_bytes} bytes (max_bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise LoadError(f"{path}:{line}: not UTF-8: byte 0x{data[error.start]:02x}") from None


class _Refused(Exception):
    def __init__(self, message: str, mark: yaml.Mark | None):
        super().__init__(message)
        self.message, self.mark = message, mark


def _check_events(text: str, path, limits: Limits) -> None:
    """Depth and expanded size, from the event stream: each open collection's count of values
    and depth below it; an anchor remembers its node's, which each alias to it adds again."""
    anchors: dict[str, tuple[int, int]] = {}  # anchor -> (values, depth) of its node
    stack: list[list] = [[0, 0, None]]  # per open collection: [values below, depth below, anchor]
    total = 0
    for event in yaml.parse(text, Loader=_BASE_LOADER):
        if isinstance(event, yaml.CollectionEndEvent):
            values, below, anchor = stack.pop()
            if anchor is not None:
                anchors[anchor] = (values + 1, below + 1)
            stack[-1][0] += values
            stack[-1][1] = max(stack[-1][1], below + 1)
            continue
        if isinstance(event, yaml.AliasEvent):
            if event.anchor not in anchors:
                raise _Refused(f"alias *{event.anchor} refers to a node that is not complete (a recursive "
                               "alias, or none); expected an anchor defined before", event.start_mark)
            values, depth = anchors[event.anchor]
        elif isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent)):
            values, depth = 1, int(isinstance(event, yaml.CollectionStartEvent))
        else:
            continue
        total += values
        if total > limits.max_nodes:
            raise _Refused(f"more than the limit of {limits.max_nodes} values with aliases expanded "
                           "(max_nodes)", event.start_mark)
        if len(stack) - 1 + depth > limits.max_depth:
            raise _Refused(f"nested deeper than the limit of {limits.max_depth} levels (max_depth)",
                           event.start_mark)
        stack[-1][0] += values
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append([0, 0, event.anchor])
        else:
            stack[-1][1] = max(stack[-1][1], depth)
            if isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
                anchors[event.anchor] = (1, 0)


def _depth_exceeds(value: object, max_depth: int) -> bool:
    """Whether ``value``'s lists and dicts nest deeper than ``max_depth`` (no recursion)."""
    pending = [(value, 1)] if isinstance(value, (dict, list)) else []
    while pending:
        node, depth = pending.pop()
        if depth > max_depth:
            return True
        children = node.values() if isinstance(node, dict) else node
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]')


def _too_deep(text: str, where: str, limits: Limits, whole_file: bool) -> str:
    """The refusal of a JSON value nested too deep, at the line where it passes the limit."""
    depth, line = 0, 1
    for match in _BRACKETS.finditer(text):
        token = match.group()
        depth += 1 if token in "[{" else -1 if token in "]}" else 0
        if depth > limits.max_depth:
            line = text.count("\n", 0, match.start()) + 1
            break
    at = f"{where}:{line}" if whole_file else where
    return f"{at}: nested deeper than the limit of {limits.max_depth} levels (max_depth)"


def _loader(limits: Limits) -> type:
    return _StringKeyLoader if limits.string_keys else _StrictLoader


class _StrictLoader(_BASE_LOADER):
    """A safe loader that refuses a mapping with two equal keys (merge keys aside) and names the
    node of a value Python cannot hold."""

    string_keys = False

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            self._check_keys(node, ())
        return node

    def construct_object(self, node, deep=False):
        try:
            return super().construct_object(node, deep)
        except ValueError as error:  # int() of more than 4300 digits, a timestamp of month 13
            raise _Refused(f"cannot read the value: {' '.join(str(error).split(';')[0].split())}",
                           node.start_mark) from None

    def _check_keys(self, root: yaml.Node, root_path: tuple[str, ...]) -> None:
        seen: set[int] = set()  # an alias: its anchor's node was checked where it was defined
        pending = [(root, root_path)]
        while pending:  # no recursion: depth is bounded, yet a stack needs no care
            node, path = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, yaml.SequenceNode):
                pending.extend((item, (*path, str(index))) for index, item in enumerate(node.value))
            elif isinstance(node, yaml.MappingNode):
                pending.extend(self._check_mapping(node, path))

    def _check_mapping(self, node: yaml.MappingNode, path: tuple[str, ...]) -> list:
        first_mark: dict[object, yaml.Mark] = {}
        children = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                children.append((value_node, path))
                continue
            key = self.construct_object(key_node, deep=True) if isinstance(key_node, yaml.ScalarNode) \
                else key_node.start_mark.index  # a complex key: equal only to itself
            key_path = (*path, str(key))
            if self.string_keys and key_node.tag != _STR_TAG:
                shown = f"{key!r} ({type(key).__name__})" if isinstance(key_node, yaml.ScalarNode) \
                    else f"a {key_node.id}"
                raise _Refused(f"{'.'.join(path) or '<top level>'}: key {shown} is not a string; expected a "
                               "string key (quote it)", key_node.start_mark)
            if key in first_mark:
                raise _Refused(f"{'.'.join(key_path)}: duplicate key; expected each key once, got it at lines "
                               f"{first_mark[key].line + 1} and {key_node.start_mark.line + 1}",
                               key_node.start_mark)
            first_mark[key] = key_node.start_mark
            children.append((value_node, key_path))
        return children


class _StringKeyLoader(_StrictLoader):
    string_keys = True


def _at(path: str | os.PathLike | None, mark: yaml.Mark | None) -> str:
    """``path:line:column`` (1-based), or ``line L, column C`` without a path."""
    if mark is None:
        return str(path)
    if path is None:
        return f"line {mark.line + 1}, column {mark.column + 1}"
    return f"{path}:{mark.line + 1}:{mark.column + 1}"


__all__ = ["CONFIG_LIMITS", "RECORD_LIMITS", "Limits", "LoadError", "OneLineError", "load_json", "load_yaml",
           "one_line", "parse_json"]
