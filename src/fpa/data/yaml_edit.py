"""Set keys of one entry of a YAML file people edit, keeping their comments and layout.

``fpa lock`` writes pins back into files people edit (``config/benchmarks.yaml``, the model
entries of a config): a plain dump would drop their comments, anchors and quoting. A ruamel.yaml
round trip keeps them; the entry edited is written block-style (a mapping value becomes an
indented block). The layout is the project's (2-space mappings, sequences indented 4 with their
dash at 2, ``null`` written out): its configs and catalogs round-trip unchanged
(tests/data/test_yaml_edit.py); a file laid out otherwise gets that indentation.
"""

from __future__ import annotations

import copy
import io

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.representer import RoundTripRepresenter


class _Representer(RoundTripRepresenter):
    """ruamel's round trip, but ``null`` written as the project writes it (ruamel leaves it empty)."""


_Representer.add_representer(type(None), lambda dumper, _: dumper.represent_scalar("tag:yaml.org,2002:null", "null"))


def _round_trip() -> YAML:
    yaml = YAML()
    yaml.Representer = _Representer
    yaml.preserve_quotes = True
    yaml.width = 4096  # a long line stays one line
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def set_entry_keys(text: str, where: str, section: str, name: str, values: dict) -> str:
    """``text`` with ``section.name.<key>`` set to each of ``values`` (scalars or flat mappings)."""
    yaml = _round_trip()
    document = yaml.load(text)
    entries = document.get(section) if isinstance(document, dict) else None
    entry = entries.get(name) if isinstance(entries, dict) else None
    if not isinstance(entry, dict):
        got = repr(entry) if isinstance(entries, dict) and name in entries else "no such entry"
        raise ValueError(f"{where}: {section}.{name}: expected a mapping to set {', '.join(values)} in, got {got}")
    after = _take_trailing_comment(entry)
    entry.fa.set_block_style()
    for key, value in values.items():
        entry[key] = CommentedMap(value) if isinstance(value, dict) else value
    _give_trailing_comment(entry, after)
    out = io.StringIO()
    yaml.dump(document, out)
    return out.getvalue()


def _last(node):
    """(container, key) of the last line of ``node``'s block: ruamel keeps the comment lines after a
    block on it, so an entry's trailing comments follow its last key wherever that goes."""
    key = len(node) - 1 if isinstance(node, list) else next(reversed(node))
    child = node[key]
    return _last(child) if isinstance(child, (dict, list)) and child else (node, key)


def _take_trailing_comment(entry):
    """The comment token of the lines after ``entry`` (blank lines, the next key's comments), taken off
    its last line, which keeps its own end-of-line comment; None without one."""
    container, key = _last(entry)
    tokens = container.ca.items.get(key)
    if not tokens or len(tokens) < 3 or tokens[2] is None:
        return None
    line, newline, after = tokens[2].value.partition("\n")
    if not after:
        return None
    trailing = copy.copy(tokens[2])
    tokens[2].value, trailing.value = line + newline, "\n" + after
    return trailing


def _give_trailing_comment(entry, trailing) -> None:
    if trailing is None:
        return
    container, key = _last(entry)
    tokens = container.ca.items.setdefault(key, [None, None, None, None])
    if tokens[2] is None:
        tokens[2] = trailing
    else:
        tokens[2].value = tokens[2].value.rstrip("\n") + trailing.value
