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

Every read of a catalog file is bounded (``fpa.catalog.read_bounds``): a download, its decompression
and a parquet shard's rows are refused past the entry's ``max_bytes`` as they stream in.
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

from fpa.catalog import read_bounds
from fpa.samples.rows import read_records
from fpa.io import ReadBounds, atomic_path, copy_bounded, over_bound, sha256_file

log = logging.getLogger(__name__)


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
