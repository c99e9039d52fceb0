"""YAML files read strictly: a duplicate mapping key or a syntax error is a one-line error.

PyYAML's ``safe_load`` keeps the last of two equal keys, so a second ``methods:`` block
silently replaces the first; Snakemake's own loader does the same. Every config, schema and
catalog of the project is read here instead, and a bad file fails naming the file, the line
and column, and (for a duplicate) the key path and both lines.
"""

from __future__ import annotations

import os

import yaml

_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available
_MERGE_TAG = "tag:yaml.org,2002:merge"  # `<<: *anchor` overrides keys on purpose


class YamlFileError(ValueError):
    """A YAML file that cannot be read as meant; ``str()`` is one line naming the file."""


class _DuplicateKey(yaml.YAMLError):
    def __init__(self, key_path: str, first: yaml.Mark, second: yaml.Mark):
        super().__init__(key_path)
        self.key_path, self.first, self.second = key_path, first, second


class StrictLoader(_BASE_LOADER):
    """A safe loader that refuses a mapping with two equal keys (merge keys aside)."""

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            self._refuse_duplicates(node, ())
        return node

    def _refuse_duplicates(self, node: yaml.Node, path: tuple[str, ...], seen: set[int] | None = None) -> None:
        seen = set() if seen is None else seen
        if id(node) in seen:  # an alias: its anchor's node was checked where it was defined
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first_mark: dict[object, yaml.Mark] = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=True) if isinstance(key_node, yaml.ScalarNode) \
                    else key_node.start_mark.index  # a complex key: equal only to itself
                key_path = (*path, str(key))
                if key in first_mark:
                    raise _DuplicateKey(".".join(key_path), first_mark[key], key_node.start_mark)
                first_mark[key] = key_node.start_mark
                self._refuse_duplicates(value_node, key_path, seen)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._refuse_duplicates(item, (*path, str(index)), seen)


def load_yaml(path: str | os.PathLike) -> object:
    """The document in ``path``; ``YamlFileError`` for a syntax error or a duplicate key."""
    with open(path, encoding="utf-8") as handle:
        try:
            return yaml.load(handle, Loader=StrictLoader)
        except _DuplicateKey as error:
            raise YamlFileError(
                f"{_at(path, error.second)}: {error.key_path}: duplicate key; expected each key once, "
                f"got it at lines {error.first.line + 1} and {error.second.line + 1}") from None
        except yaml.MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            context = f" ({error.context} at {_at(None, error.context_mark)})" \
                if error.context and error.context_mark else ""
            raise YamlFileError(f"{_at(path, mark)}: invalid YAML: {error.problem}{context}") from None
        except (yaml.YAMLError, UnicodeDecodeError) as error:
            raise YamlFileError(f"{path}: invalid YAML: {' '.join(str(error).split())}") from None


def _at(path: str | os.PathLike | None, mark: yaml.Mark | None) -> str:
    """``path:line:column`` (1-based), or ``line L, column C`` without a path."""
    if mark is None:
        return str(path)
    if path is None:
        return f"line {mark.line + 1}, column {mark.column + 1}"
    return f"{path}:{mark.line + 1}:{mark.column + 1}"


__all__ = ["StrictLoader", "YamlFileError", "load_yaml"]
