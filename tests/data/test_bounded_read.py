"""Compression bombs and overlong lines are refused in one line, within the reader's bounds.

The bombs are real gzip files (``tests/hostile_input/bombs.py`` writes them: concatenated members of
1 MiB of one byte each, ~1 KB compressed). Memory is measured with tracemalloc here, where a
bound is checked against what was allocated; the commands' peak RSS on them was measured once (docs/archive/benchmarks.md).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from fpa.catalog import read_benchmarks_config, read_bounds

from fpa.data.download import fetch
from fpa.io import MAX_DECOMPRESSED_BYTES, MAX_LINE_BYTES, ReadBounds, iter_jsonl

from hostile_input.bombs import record, write_gzip_bomb

ROOT = Path(__file__).resolve().parents[2]

MiB, GiB = 1 << 20, 1 << 30
HEAD = b'{"id": "bomb", "question": "'


def _peak_while(action) -> tuple[BaseException, int]:
    """The exception ``action`` raised and the most memory Python held meanwhile."""
    tracemalloc.start()
    try:
        action()
    except BaseException as error:  # noqa: BLE001 (the caller checks what it was)
        return error, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    raise AssertionError("no refusal")


def test_one_gib_line_is_refused_after_the_bound_on_one_line(tmp_path):
    bomb = tmp_path / "bomb.jsonl.gz"
    assert write_gzip_bomb(bomb, GiB, HEAD) < 1.1e6  # 1 MB on disk
    error, peak = _peak_while(lambda: list(iter_jsonl(bomb, bounds=ReadBounds(MiB, source="test"))))
    assert isinstance(error, ValueError)
    assert str(error) == f"{bomb}:1: line longer than {MiB} bytes, the bound on one record (test)"
    assert peak < 4 * MiB, peak


def test_a_gzip_is_refused_past_its_decompressed_bound(tmp_path):
    bomb = tmp_path / "records.jsonl.gz"
    write_gzip_bomb(bomb, 64 * MiB, b"", record(4096))
    error, peak = _peak_while(lambda: list(iter_jsonl(bomb, bounds=ReadBounds(8192, 10 * 4096, "ten records"))))
    assert str(error) == f"{bomb}: more than 40960 bytes by line 11, the bound on this file (ten records)"
    assert peak < MiB, peak


def test_defaults_bound_every_reader():
    assert ReadBounds().line_bytes == MAX_LINE_BYTES
    assert ReadBounds().total_for(gzipped=True) == MAX_DECOMPRESSED_BYTES
    assert ReadBounds().total_for(gzipped=False) is None  # a plain file's size is on disk already


def test_a_line_at_the_bound_is_taken(tmp_path):
    path = tmp_path / "exact.jsonl"
    path.write_bytes(record(4096) * 2)
    assert len(list(iter_jsonl(path, bounds=ReadBounds(4096, 8192)))) == 2
    with pytest.raises(ValueError, match=":1: line longer than 4095 bytes"):
        list(iter_jsonl(path, bounds=ReadBounds(4095)))


def test_catalog_bounds_come_from_records_and_line_length():
    entry = {"name": "gsm8k", "records": 1319, "max_line_bytes": 8192}
    assert read_bounds(entry) == ReadBounds(8192, 1319 * 8192, read_bounds(entry).source)
    assert "1319 records of at most 8192 bytes" in read_bounds(entry).source
    assert read_bounds({"name": "taco", "records": 25443}).total_bytes == MAX_DECOMPRESSED_BYTES
    big = read_bounds({"name": "taco", "records": 25443, "max_line_bytes": 1 << 28, "max_bytes": 8 * GiB})
    assert (big.line_bytes, big.total_bytes, big.source) == (1 << 28, 8 * GiB, "catalog taco: max_bytes")


@pytest.mark.parametrize("value", [0, -1, "8k", True, 1.5])
def test_catalog_bounds_must_be_positive_integers(tmp_path, value):
    catalog = tmp_path / "benchmarks.yaml"
    text = (ROOT / ".test" / "config_math" / "benchmarks.yaml").read_text()
    catalog.write_text(text.replace("    max_line_bytes: 4096\n", f"    max_line_bytes: {json.dumps(value)}\n", 1))
    with pytest.raises(ValueError, match=re.escape(f"{catalog}: benchmarks.gsm8k.max_line_bytes: expected an "
                                                   f"integer >= 1, got {value!r}")):
        read_benchmarks_config(catalog)


@pytest.mark.parametrize("catalog, files", [("config/benchmarks.yaml", ""), (".test/config_math/benchmarks.yaml", "tiny"),
                                            (".test/config_code/benchmarks.yaml", "tests/fixtures/code/mirror")])
def test_every_mirror_file_is_within_its_catalog_bounds(mirror, catalog, files):
    config = read_benchmarks_config(ROOT / catalog)
    base = ROOT / files if files.startswith("tests/") else mirror / files
    entries = [entry for section in ("benchmarks", "training", "code") for entry in config.get(section, {}).values()
               if "path" in entry and (base / entry["path"]).is_file()]
    assert entries
    for entry in entries:
        assert sum(1 for _ in iter_jsonl(base / entry["path"], bounds=read_bounds(entry))) == entry["records"]


def test_download_decompresses_within_the_bound(tmp_path):
    """A ``jsonl.gz`` upstream stored plain is decompressed as it streams, up to ``max_bytes``."""
    bomb = tmp_path / "upstream.jsonl.gz"
    write_gzip_bomb(bomb, GiB, HEAD)
    entry = {"name": "hh_rlhf", "hub": "x/y", "path": "hh_rlhf/train.jsonl", "sha256": None, "url": bomb.as_uri(),
             "upstream_format": "jsonl.gz", "loader": "hh_rlhf", "records": 4, "max_bytes": 8 * MiB}
    dest = tmp_path / "resources" / "train.jsonl"
    with pytest.raises(ValueError) as error:
        fetch(entry, dest)
    assert str(error.value) == (f"hh_rlhf: {bomb.as_uri()} (decompressed): more than {8 * MiB} bytes, the bound on "
                                f"this file (catalog hh_rlhf: max_bytes)")
    assert not dest.exists() and not list(dest.parent.iterdir())  # nor a temporary left behind


def test_a_parquet_shard_past_the_record_count_is_refused_before_it_is_read(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    import pyarrow

    pq.write_table(pyarrow.table({"text": ["a", "b", "c"]}), tmp_path / "shard-0.parquet")
    entry = {"name": "imdb", "hub": "x/y", "path": "imdb/train.jsonl", "sha256": None, "shards": 1,
             "url": f"file://{tmp_path}/shard-{{shard}}.parquet", "upstream_format": "parquet", "loader": "imdb",
             "records": 2}
    with pytest.raises(ValueError, match=re.escape("imdb: " + entry["url"].format(shard=0) + ": expected 2 records, "
                                                   "got more (3 rows up to shard 0)")):
        fetch(entry, tmp_path / "train.jsonl")
    assert fetch({**entry, "records": 3}, tmp_path / "train.jsonl").read_text().count("\n") == 3


@pytest.mark.parametrize("command", ["validate-benchmark", "prepare-benchmark"])
def test_the_commands_refuse_a_bomb_in_one_line(tmp_path, command):
    bomb = tmp_path / "bomb.jsonl.gz"
    write_gzip_bomb(bomb, GiB, HEAD)
    args = {"validate-benchmark": ["--config-json", "{}"],
            "prepare-benchmark": ["--config-json", '{"parts": ["gsm8k"]}', "--catalog",
                                  str(ROOT / ".test" / "config_math" / "benchmarks.yaml")]}[command]
    done = subprocess.run([sys.executable, "-m", "fpa", command, str(bomb), "--name", "b", "--out",
                           str(tmp_path / "out.jsonl"), *args], capture_output=True, text=True, timeout=120)
    errors = [line for line in done.stderr.splitlines() if not line.startswith("fpa usage:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr
    assert re.fullmatch(rf"fpa {command}: error: {re.escape(str(bomb))}:1: line longer than \d+ bytes, the bound on "
                        r"one record \(.+\)", errors[0])
    assert not (tmp_path / "out.jsonl").exists()
