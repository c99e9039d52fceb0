"""Fetch one benchmark file into ``resources/``: from the data mirror, else upstream.

``config/benchmarks.yaml`` gives, per file, the mirror-relative ``path``, the
``sha256`` of the file as stored in the mirror and the pinned upstream ``url``.
The copy is checked against ``sha256`` before it is renamed onto ``dest``, so a
bad or partial file never appears under its final name.
"""

from __future__ import annotations

import gzip
import os
import shutil
import urllib.request
from pathlib import Path

import yaml

from fpa.io import atomic_path, sha256_file

FILE_KEYS = ("path", "sha256", "url", "upstream_format", "loader", "records")
UPSTREAM_FORMATS = ("jsonl", "jsonl.gz", "json_tree")
SECTIONS = ("benchmarks", "training")


def read_benchmarks_config(path: str | os.PathLike) -> dict:
    """Parse ``benchmarks.yaml``; every entry gains its ``name``. Errors name file and key."""
    with open(path) as handle:
        config = yaml.safe_load(handle)
    for section in SECTIONS:
        for name, entry in config.get(section, {}).items():
            entry["name"] = name
            keys = ("missing", "loader") if "missing" in entry else FILE_KEYS
            for key in keys:
                if key not in entry:
                    raise ValueError(f"{path}: {section}.{name}.{key}: required key is missing")
            fmt = entry.get("upstream_format", "jsonl")
            if fmt not in UPSTREAM_FORMATS:
                raise ValueError(
                    f"{path}: {section}.{name}.upstream_format: expected one of "
                    f"{list(UPSTREAM_FORMATS)}, got {fmt!r}"
                )
    names = {name for section in SECTIONS for name in config.get(section, {})}
    for group, members in config.get("groups", {}).items():
        for member in members:
            if member not in names:
                raise ValueError(f"{path}: groups.{group}: unknown benchmark {member!r}")
    return config


def available_files(catalog: dict) -> dict[str, dict]:
    """Catalog entries that have a source (benchmarks and training files), by name."""
    return {name: entry for section in SECTIONS for name, entry in catalog.get(section, {}).items()
            if "missing" not in entry}


def fetch(entry: dict, dest: str | os.PathLike, mirror_dir: str | os.PathLike | None = None) -> Path:
    """Write the file of ``entry`` to ``dest`` (bytes as stored in the mirror) and return ``dest``.

    With ``mirror_dir`` the file is copied from ``mirror_dir / entry["path"]``;
    without it, it is downloaded from ``entry["url"]`` (a ``jsonl.gz`` upstream is
    decompressed when the mirror stores plain JSONL). Either way its sha256 must
    equal ``entry["sha256"]``; otherwise a one-line ``ValueError`` is raised.
    """
    name = entry.get("name", entry.get("path", "?"))
    if "missing" in entry:
        raise ValueError(f"{name}: no source available: {' '.join(entry['missing'].split())}")
    with atomic_path(dest) as tmp:
        if mirror_dir is not None:
            source = Path(mirror_dir) / entry["path"]
            if not source.is_file():
                raise ValueError(f"{name}: mirror file not found: {source}")
            shutil.copyfile(source, tmp)
            where = str(source)
        else:
            _download(entry, tmp)
            where = entry["url"]
        actual = sha256_file(tmp)
        if actual != entry["sha256"]:
            raise ValueError(
                f"{name}: sha256 mismatch for {where}: expected {entry['sha256']}, got {actual}"
            )
    return Path(dest)


def _download(entry: dict, tmp: Path) -> None:
    name, fmt, url = entry["name"], entry["upstream_format"], entry["url"]
    if fmt == "json_tree":
        raise ValueError(
            f"{name}: upstream is one JSON file per problem ({url}); the packed JSONL "
            "exists only in the data mirror: set a mirror dir (FPA_DATA_MIRROR)"
        )
    with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as handle:
        shutil.copyfileobj(response, handle)
    stored_gz = entry["path"].endswith(".gz")
    if fmt == "jsonl.gz" and not stored_gz:
        data = gzip.decompress(tmp.read_bytes())
        tmp.write_bytes(data)
    elif fmt == "jsonl" and stored_gz:
        # gzip bytes depend on the compressor, so the mirror's .gz cannot be rebuilt.
        raise ValueError(f"{name}: mirror stores gzip of a plain upstream file; fetch it from the mirror")
