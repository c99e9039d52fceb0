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

Every read of a catalog file is bounded (``read_bounds``): each line at most the entry's
``max_line_bytes`` (default ``fpa.io.MAX_LINE_BYTES``), the whole file at most its ``max_bytes``
(default: ``records`` lines of that length, and no more than ``fpa.io.MAX_DECOMPRESSED_BYTES``).
A download, its decompression and a parquet shard's rows are refused past ``max_bytes`` as
they stream in.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
import tempfile
import urllib.request
import zlib
from pathlib import Path

from fpa.data.validate import read_records
from fpa.io import MAX_DECOMPRESSED_BYTES, MAX_LINE_BYTES, ReadBounds, atomic_path, copy_bounded, over_bound, sha256_file
from fpa.project import PROJECT_ROOT
from fpa.safe_load import load_yaml

log = logging.getLogger(__name__)

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
        read_records(path, expected=entry["records"], gzipped=entry["path"].endswith(".gz"), bounds=read_bounds(entry))
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
    bounds = read_bounds(entry)
    stored_gz = entry["path"].endswith(".gz")
    if fmt == "jsonl" and stored_gz:
        # gzip bytes depend on the compressor, so the mirror's .gz cannot be rebuilt.
        raise ValueError(f"{name}: mirror stores gzip of a plain upstream file; fetch it from the mirror")
    if fmt == "jsonl.gz" and not stored_gz:
        with tempfile.NamedTemporaryFile(suffix=".gz", dir=tmp.parent) as packed:
            _copy_url(url, packed, bounds, name)
            packed.flush()
            try:
                with gzip.open(packed.name, "rb") as source, open(tmp, "wb") as handle:
                    copy_bounded(source, handle, bounds.total_bytes, f"{name}: {url} (decompressed)", bounds.source)
            except (gzip.BadGzipFile, EOFError, zlib.error) as err:
                raise ValueError(f"{name}: {url}: not a complete gzip file ({err})") from None
    else:
        with open(tmp, "wb") as handle:
            _copy_url(url, handle, bounds, name)


def _copy_url(url: str, handle, bounds: ReadBounds, name: str) -> None:
    with urllib.request.urlopen(url, timeout=60) as response:
        copy_bounded(response, handle, bounds.total_bytes, f"{name}: {url}", bounds.source)


def _download_parquet_shards(entry: dict, tmp: Path) -> None:
    """Every shard of ``entry["url"]`` (``{shard}`` = 0 .. shards - 1), rows written as JSONL.

    Each shard's footer says how many rows and how many bytes its columns decompress to; a
    shard that would pass the entry's ``records`` or ``max_bytes`` is refused before it is read.
    """
    import pyarrow.parquet as pq

    if "{shard" not in entry["url"] or "shards" not in entry:
        raise ValueError(f"{entry['name']}: parquet upstream needs a url with a {{shard}} field and shards: <count>")
    bounds = read_bounds(entry)
    rows, size = 0, 0
    with open(tmp, "w") as out:
        for shard in range(entry["shards"]):
            url = entry["url"].format(shard=shard)
            with tempfile.NamedTemporaryFile(suffix=".parquet", dir=tmp.parent) as part:
                _copy_url(url, part, bounds, entry["name"])
                part.flush()
                meta = pq.ParquetFile(part.name).metadata
                rows += meta.num_rows
                size += sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
                if rows > entry["records"]:
                    raise ValueError(f"{entry['name']}: {url}: expected {entry['records']} records, got more "
                                     f"({rows} rows up to shard {shard})")
                if size > bounds.total_bytes:
                    raise over_bound(f"{entry['name']}: {url}", bounds.total_bytes, bounds.source,
                                     " of rows (decompressed)")
                for row in pq.read_table(part.name).to_pylist():
                    out.write(json.dumps(row, default=str) + "\n")
