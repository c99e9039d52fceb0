"""The project's catalog of benchmark, training, code and preference files (``config/benchmarks.yaml``):
its sections, each entry's keys checked as it is read, and the bounds on reading an entry's file.

Every read of a catalog file is bounded (``read_bounds``): each line at most the entry's
``max_line_bytes`` (default ``fpa.io.MAX_LINE_BYTES``), the whole file at most its ``max_bytes``
(default: ``records`` lines of that length, and no more than ``fpa.io.MAX_DECOMPRESSED_BYTES``).
``fpa.data.download`` fetches an entry's file.
"""

from __future__ import annotations

import os

from fpa.io import MAX_DECOMPRESSED_BYTES, MAX_LINE_BYTES, ReadBounds
from fpa.project import PROJECT_ROOT
from fpa.safe_load import load_yaml

#: The project's catalog (a config's ``data.catalog`` by default): where the code graders' and the gold
#: self-check's mirror files are named.
CATALOG = PROJECT_ROOT / "config" / "benchmarks.yaml"

FILE_KEYS = ("path", "sha256", "url", "upstream_format", "loader", "records")
#: Optional per-file bounds (read_bounds), each a positive integer.
BOUND_KEYS = ("records", "max_line_bytes", "max_bytes")
#: The repeated problems an upstream benchmark file really has (fpa.data.text), default 0.
DUPLICATES_KEY = "duplicate_problems"
UPSTREAM_FORMATS = ("jsonl", "jsonl.gz", "json_tree", "parquet")
SECTIONS = ("benchmarks", "training")
#: Code benchmark and training files (the benchmark families of fpa.grading.code).
CODE_SECTION = "code"
#: Preference-pair training data (fpa.data.step_dpo).
PREFERENCE_SECTION = "preference"
ALL_SECTIONS = (*SECTIONS, CODE_SECTION, PREFERENCE_SECTION)


def read_benchmarks_config(path: str | os.PathLike) -> dict:
    """Parse ``benchmarks.yaml``; every entry gains its ``name``. Errors name file and key."""
    config = load_yaml(path)
    for section in ALL_SECTIONS:
        for name, entry in config.get(section, {}).items():
            entry["name"] = name
            keys = ("missing", "loader") if "missing" in entry else FILE_KEYS
            for key in keys:
                if key not in entry:
                    raise ValueError(f"{path}: {section}.{name}.{key}: required key is missing")
            for key in BOUND_KEYS:
                value = entry.get(key, 1)
                if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                    raise ValueError(f"{path}: {section}.{name}.{key}: expected an integer >= 1, got {value!r}")
            duplicates = entry.get(DUPLICATES_KEY, 0)
            if isinstance(duplicates, bool) or not isinstance(duplicates, int) or duplicates < 0:
                raise ValueError(f"{path}: {section}.{name}.{DUPLICATES_KEY}: expected an integer >= 0, "
                                 f"got {duplicates!r}")
            if entry.get("sha256", "") is None and "hub" not in entry:
                raise ValueError(f"{path}: {section}.{name}.sha256: null is allowed only for hub files (hub: <dataset>)")
            fmt = entry.get("upstream_format", "jsonl")
            if fmt not in UPSTREAM_FORMATS:
                raise ValueError(
                    f"{path}: {section}.{name}.upstream_format: expected one of "
                    f"{list(UPSTREAM_FORMATS)}, got {fmt!r}"
                )
    names = {name for section in ALL_SECTIONS for name in config.get(section, {})}
    for group, members in config.get("groups", {}).items():
        for member in members:
            if member not in names:
                raise ValueError(f"{path}: groups.{group}: unknown benchmark {member!r}")
    return config


def available_files(catalog: dict) -> dict[str, dict]:
    """Catalog entries that have a source (benchmarks and training files), by name."""
    return {name: entry for section in SECTIONS for name, entry in catalog.get(section, {}).items()
            if "missing" not in entry}


def find_entry(catalog: dict, name: str) -> tuple[str, dict]:
    """``(section, entry)`` of the catalog entry ``name``, in any section."""
    for section in ALL_SECTIONS:
        if name in catalog.get(section, {}):
            return section, catalog[section][name]
    known = sorted(n for section in ALL_SECTIONS for n in catalog.get(section, {}))
    raise ValueError(f"unknown catalog entry {name!r}; expected one of {known}")


def declared_duplicates(entry: dict) -> int:
    """The repeated problems the entry's file has upstream (its ``duplicate_problems``; 0 if none)."""
    return entry.get(DUPLICATES_KEY, 0)


def read_bounds(entry: dict) -> ReadBounds:
    """The bounds on reading the catalog file of ``entry`` (its keys ``max_line_bytes``, ``max_bytes``)."""
    line = entry.get("max_line_bytes", MAX_LINE_BYTES)
    if "max_bytes" in entry:
        return ReadBounds(line, entry["max_bytes"], f"catalog {entry['name']}: max_bytes")
    total = min(entry["records"] * line, MAX_DECOMPRESSED_BYTES)
    return ReadBounds(line, total, f"catalog {entry['name']}: {entry['records']} records of at most {line} bytes, "
                                   f"at most {MAX_DECOMPRESSED_BYTES} in all unless max_bytes says")
