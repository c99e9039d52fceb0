"""fetch(): the mirror path and every error path. No network: nothing here downloads."""

import gzip
import hashlib
import re
from pathlib import Path

import pytest
import yaml

from fpa.catalog import available_files, read_benchmarks_config

from fpa.data.download import fetch
from fpa.io import sha256_file

CONFIG_PATH = Path(__file__).resolve().parents[2] / "config" / "benchmarks.yaml"
CONFIG = read_benchmarks_config(CONFIG_PATH)
FILES = available_files(CONFIG)


@pytest.mark.parametrize("name", sorted(FILES))
def test_config_sha256_matches_the_mirror(mirror, name):
    entry = FILES[name]
    assert sha256_file(mirror / entry["path"]) == entry["sha256"]
    if entry["path"].endswith(".gz"):
        with gzip.open(mirror / entry["path"], "rb") as handle:
            assert hashlib.sha256(handle.read()).hexdigest() == entry["sha256_uncompressed"]


def test_config_urls_pin_a_commit():
    for name, entry in FILES.items():
        assert entry["url"].startswith("https://raw.githubusercontent.com/"), name
        commit = entry["url"].split("/")[5]
        assert len(commit) == 40 and int(commit, 16) >= 0, name


def test_config_samples_and_groups():
    benchmarks = CONFIG["benchmarks"]
    for name, entry in benchmarks.items():
        expected = 32 if name.startswith(("amc", "aime")) else 8
        assert entry["n_samples"] == expected, name
    assert "missing" in benchmarks["amc24"]
    groups = CONFIG["groups"]
    assert groups["MATH-P"] == ["math_perturb_simple", "math_perturb_hard"]
    assert groups["AMC"] == ["amc23", "amc24"]
    assert groups["AIME"] == ["aime24", "aime25", "aime26"]
    assert sorted(sum(groups.values(), [])) == sorted(benchmarks)


@pytest.mark.parametrize("section, name, key, message", [
    ("benchmarks", "gsm8k", "sha256", "benchmarks.gsm8k.sha256: required key"),
    # a file without a pinned sha256 must come from the hub (fetch records its hash)
    ("code", "apps_train", "hub", "code.apps_train.sha256: null is allowed only for hub"),
])
def test_config_errors_name_file_and_key(tmp_path, section, name, key, message):
    config = yaml.safe_load(CONFIG_PATH.read_text())
    del config[section][name][key]
    path = tmp_path / "benchmarks.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ValueError, match=re.escape(f"benchmarks.yaml: {message}")):
        read_benchmarks_config(path)


def test_fetch_from_mirror(mirror, tmp_path):
    dest = fetch(FILES["aime25"], tmp_path / "resources" / "aime25.jsonl", mirror_dir=mirror)
    assert sha256_file(dest) == FILES["aime25"]["sha256"]


def test_fetch_keeps_the_stored_gzip(mirror, tmp_path):
    dest = fetch(FILES["math_train"], tmp_path / "train.jsonl.gz", mirror_dir=mirror)
    assert sha256_file(dest) == FILES["math_train"]["sha256"]


def test_sha_mismatch_names_file_and_both_hashes(tmp_path):
    entry = FILES["aime25"]
    fake_mirror = tmp_path / "mirror"
    (fake_mirror / "aime25").mkdir(parents=True)
    (fake_mirror / entry["path"]).write_text('{"answer": "70", "problem": "tampered"}\n')
    dest = tmp_path / "out" / "aime25.jsonl"
    with pytest.raises(ValueError) as error:
        fetch(entry, dest, mirror_dir=fake_mirror)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("aime25: sha256 mismatch for ") and str(fake_mirror / entry["path"]) in message
    assert f"expected {entry['sha256']}, got {sha256_file(fake_mirror / entry['path'])}" in message
    assert not dest.exists() and list(dest.parent.iterdir()) == []  # no partial file left


def test_missing_mirror_file(tmp_path):
    with pytest.raises(ValueError, match=r"^gsm8k: mirror file not found: .*gsm8k/test.jsonl$"):
        fetch(FILES["gsm8k"], tmp_path / "gsm8k.jsonl", mirror_dir=tmp_path)


def test_missing_benchmark_gives_the_reason(tmp_path):
    with pytest.raises(ValueError, match=r"^amc24: no source available: AMC 2024"):
        fetch(CONFIG["benchmarks"]["amc24"], tmp_path / "amc24.jsonl", mirror_dir=tmp_path)


def test_json_tree_upstream_needs_the_mirror(tmp_path):
    # Raises before any network access.
    with pytest.raises(ValueError, match=r"^math_test: upstream is one JSON file per problem"):
        fetch(FILES["math_test"], tmp_path / "test.jsonl")
