"""config/README.md, every config key with its type, default and meaning, written from the
schema's descriptions (workflow/schemas/config.schema.yaml) so the two never disagree, and the
graders' table written from their registered records (``fpa.grading``).

    python -m fpa config-doc --write config/README.md    # rewrite it (tests/test_schema_doc.py compares)
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from fpa.config.schema import ENUM_FROM, load_schema
from fpa.grading import GRADERS

DOC = "config/README.md"
INTRO = """# Configuration

A config file is a whole experiment: `snakemake --configfile FILE` replaces
`config/config.yaml` (the toy default) rather than being merged into it, and every key it leaves
out takes the default below. `fpa check-config FILE` validates one without running anything;
an error names the file, the key path, what was expected and the value received.

The shipped configs:

| file | experiment |
|---|---|
{configs}

This page is generated from `workflow/schemas/config.schema.yaml` by
`python -m fpa config-doc --write config/README.md` (`tests/test_schema_doc.py` fails when it is
stale): edit the schema's descriptions, not this page. `<name>` stands for a key you choose
(a model, benchmark, method or table name).
"""


def _resolve(node: dict, defs: dict) -> dict:
    """``node`` with its ``$ref`` replaced by the definition, the node's own keys winning."""
    if "$ref" not in node:
        return node
    target = _resolve(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    merged = {**target, **{key: value for key, value in node.items() if key != "$ref"}}
    if "properties" in target and "properties" in node:
        merged["properties"] = {name: {**target["properties"].get(name, {}), **sub}
                                for name, sub in {**target["properties"], **node["properties"]}.items()}
    return merged


def _type(node: dict, defs: dict) -> str:
    node = _resolve(node, defs)
    if "enum" in node:
        choices = "one of " + ", ".join(f"`{value}`" for value in node["enum"])
        if ENUM_FROM in node:  # its owner's names (a registry's keys, which a user's package may extend)
            return f"{choices}, from `{node[ENUM_FROM].replace(':', '.')}`"
        return choices
    if "const" in node:
        return f"`{node['const']}`"
    if "oneOf" in node:
        return " or ".join(_type(option, defs) for option in node["oneOf"])
    kinds = node.get("type", "object")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "array" in kinds and isinstance(node.get("items"), dict) and "type" in _resolve(node["items"], defs):
        kinds = [f"list of {_type(node['items'], defs)}" if kind == "array" else kind for kind in kinds]
    kinds = [f"{kind} {_range(node)}".rstrip() if kind in ("integer", "number") else kind for kind in kinds]
    return " or ".join(kinds)


_LOWER = {"minimum": "≤", "exclusiveMinimum": "<"}
_UPPER = {"maximum": "≤", "exclusiveMaximum": "<"}


def _range(node: dict) -> str:
    """A number's bounds as the judge checks them, e.g. ``(0 ≤ x ≤ 4294967295)``; none: empty."""
    lower = [f"{node[key]} {sign}" for key, sign in _LOWER.items() if key in node]
    upper = [f"{sign} {node[key]}" for key, sign in _UPPER.items() if key in node]
    return f"({' '.join([*lower, 'x', *upper])})" if lower or upper else ""


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _default(node: dict) -> str:
    if "default" not in node:
        return ""
    return "`" + json.dumps(node["default"], ensure_ascii=False).replace("|", "\\|") + "`"


def _children(node: dict, defs: dict) -> list[tuple[str, dict]]:
    """The keys one level below ``node``: its properties, or ``<name>`` for a map of entries."""
    node = _resolve(node, defs)
    if node.get("properties"):
        return list(node["properties"].items())
    entries = node.get("additionalProperties")
    if isinstance(entries, dict):
        entries = _resolve(entries, defs)
        tables = [option for option in entries.get("oneOf", []) if "$ref" in option]  # tables.<name>
        entries = _resolve(tables[0], defs) if tables else entries
        if entries.get("properties"):
            return [("<name>", entries)]
    return []


def _rows(prefix: str, node: dict, defs: dict) -> list[str]:
    rows = []
    for key, child in _children(node, defs):
        path = f"{prefix}.{key}"
        resolved = _resolve(child, defs)
        if key != "<name>":
            rows.append(f"| `{path}` | {_cell(_type(child, defs))} | {_default(resolved)} | "
                        f"{_cell(resolved.get('description', ''))} |")
        rows += _rows(path, resolved, defs)
    return rows


def _first_sentence(path: Path) -> str:
    """The first sentence of the comment that opens a config file."""
    comment = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        comment.append(line[1:].strip())
    text, depth = " ".join(comment), 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ".:" and text[index + 1:index + 2] in ("", " "):
            return text[:index]
    return text


def _resources(node: dict, defs: dict) -> str:
    """resources: a row per rule group with its defaults, then the keys every group takes."""
    keys = ["mem_mb", "runtime", "cpus_per_task", "gpu"]
    lines = ["| group | its jobs | " + " | ".join(f"`{key}`" for key in keys) + " |", "|---|---|" + "---:|" * len(keys)]
    for group, child in node["properties"].items():
        defaults = child.get("properties", {})
        lines.append(f"| `resources.{group}` | {_cell(child.get('description', ''))} | "
                     + " | ".join(str(defaults.get(key, {}).get("default", "")) for key in keys) + " |")
    lines += ["", "Every group takes these keys (a key left out takes the group's default above):", "",
              "| key | type | meaning |", "|---|---|---|"]
    job = _resolve(defs["job_resources"], defs)
    lines += [f"| `{key}` | {_type(sub, defs)} | {_cell(_resolve(sub, defs).get('description', ''))} |"
              for key, sub in job["properties"].items()]
    return "\n".join(lines) + "\n"


def _summary(text: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return _cell((text or "").strip().split("\n\n")[0])


def _graders() -> str:
    """The graders' table, written from their records (``fpa.grading``'s registry): a family's own module,
    a user's one included, gives its row."""
    lines = ["The graders, `benchmarks.<name>.grader` (`fpa.grading`; a code benchmark family is one module that "
             "registers its record: docs/code_eval.md):", "",
             "| grader | module | what it grades | catalog `code` entry | its prompts | the program "
             "| training reward of `dataset.source` |", "|---|---|---|---|---|---|---|"]
    for name, grader in GRADERS.items():
        module = GRADERS.module_of(name)
        prompts, program = getattr(grader, "load_problems", None), getattr(grader, "program", None)
        lines.append(f"| `{name}` | `{module}` | {_summary(importlib.import_module(module).__doc__)} | "
                     f"{_cell(getattr(grader, 'task_file', ''))} | {_summary(prompts and prompts.__doc__)} | "
                     f"{_summary(program and program.__doc__)} | {', '.join(grader.rewards)} |")
    return "\n".join(lines) + "\n"


def _configs(root: Path) -> str:
    return "\n".join(f"| `config/{path.name}` | {_cell(_first_sentence(path))} |"
                     for path in sorted((root / "config").glob("*.yaml")))


def render(root: Path) -> str:
    """The whole of config/README.md."""
    schema = load_schema()
    defs = schema.get("$defs", {})
    parts = [INTRO.format(configs=_configs(root))]
    for key, node in schema["properties"].items():
        resolved = _resolve(node, defs)
        required = " (required)" if key in schema.get("required", []) else ""
        parts.append(f"## `{key}`{required}\n\n{_cell(resolved.get('description', ''))}\n\n"
                     f"Type: {_type(node, defs)}" + (f"; default {_default(resolved)}" if "default" in resolved else "")
                     + ".\n")
        if key == "resources":
            parts.append(_resources(resolved, defs))
            continue
        rows = _rows(key, resolved, defs)
        if rows:
            parts.append("| key | type | default | meaning |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")
        if key == "benchmarks":
            parts.append(_graders())
    return "\n".join(parts)
