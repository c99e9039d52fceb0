"""Fetch one benchmark file into ``resources/``: from the data mirror, else upstream.

``config/benchmarks.yaml`` gives, per file, the mirror-relative ``path``, the
``sha256`` of the file as stored in the mirror and the pinned upstream ``url``.
The copy is checked against ``sha256`` before it is renamed onto ``dest``, so a
bad or partial file never appears under its final name.

Code files (section ``code``) and preference data (section ``preference``) may come
from the Hugging Face hub only (``hub:`` names the dataset). Where their sha256 is not known (no copy was available to
hash), the catalog says ``sha256: null``: the file is then accepted as fetched and
its sha256 is printed and recorded in the provenance sidecar, never silently.
A ``parquet`` upstream is a set of shards (``url`` with a ``{shard}`` field,
``shards`` of them), converted to one JSONL file of the rows.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import tempfile
import urllib.request
from pathlib import Path

from fpa.data.validate import read_records
from fpa.io import atomic_path, sha256_file
from fpa.safe_load import load_yaml

log = logging.getLogger(__name__)

FILE_KEYS = ("path", "sha256", "url", "upstream_format", "loader", "records")
UPSTREAM_FORMATS = ("jsonl", "jsonl.gz", "json_tree", "parquet")
SECTIONS = ("benchmarks", "training")
#: Code benchmark and training files (fpa.grading.code, fpa.data.code).
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
        if entry["sha256"] is None:  # hub file never hashed here: accept, but say so (provenance keeps it)
            log.warning("%s: sha256 not pinned in the catalog (run `fpa lock`); fetched %s has sha256 %s",
                        name, where, actual)
        elif actual != entry["sha256"]:
            revision = f" at revision {entry['revision']}" if entry.get("revision") else ""
            raise ValueError(f"{name}: sha256 mismatch for {where}{revision}: expected {entry['sha256']}, "
                             f"got {actual}")
        check_content(tmp, where, entry)
    return Path(dest)


def check_content(path: Path, where: str, entry: dict) -> None:
    """The fetched file is the non-empty UTF-8 JSONL of the catalog's ``records`` objects.

    Checked in the fetch job, so a bad file fails there, naming its source and line, not in
    a job that has built something from it.
    """
    try:
        read_records(path, expected=entry["records"], gzipped=entry["path"].endswith(".gz"))
    except ValueError as error:
        raise ValueError(f"{entry['name']}: {str(error).replace(str(path), where)}") from None


def _download(entry: dict, tmp: Path) -> None:
    name, fmt, url = entry["name"], entry["upstream_format"], entry["url"]
    if fmt == "json_tree":
        raise ValueError(
            f"{name}: upstream is one JSON file per problem ({url}); the packed JSONL "
            "exists only in the data mirror: set a mirror dir (FPA_DATA_MIRROR)"
        )
    if fmt == "parquet":
        _download_parquet_shards(entry, tmp)
        return
    with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as handle:
        shutil.copyfileobj(response, handle)
    stored_gz = entry["path"].endswith(".gz")
    if fmt == "jsonl.gz" and not stored_gz:
        data = gzip.decompress(tmp.read_bytes())
        tmp.write_bytes(data)
    elif fmt == "jsonl" and stored_gz:
        # gzip bytes depend on the compressor, so the mirror's .gz cannot be rebuilt.
        raise ValueError(f"{name}: mirror stores gzip of a plain upstream file; fetch it from the mirror")


def _download_parquet_shards(entry: dict, tmp: Path) -> None:
    """Every shard of ``entry["url"]`` (``{shard}`` = 0 .. shards - 1), rows written as JSONL."""
    import pyarrow.parquet as pq

    if "{shard" not in entry["url"] or "shards" not in entry:
        raise ValueError(f"{entry['name']}: parquet upstream needs a url with a {{shard}} field and shards: <count>")
    with open(tmp, "w") as out:
        for shard in range(entry["shards"]):
            with tempfile.NamedTemporaryFile(suffix=".parquet", dir=tmp.parent) as part:
                with urllib.request.urlopen(entry["url"].format(shard=shard), timeout=60) as response:
                    shutil.copyfileobj(response, part)
                part.flush()
                for row in pq.read_table(part.name).to_pylist():
                    out.write(json.dumps(row, default=str) + "\n")
