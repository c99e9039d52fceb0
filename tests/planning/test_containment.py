"""Containment by construction (fpa.containment): a name or a catalog path that would lead out of its
directory is refused, one line, before planning ends; every output, log and benchmark file that the
shipped configs plan lies inside the work directory's results/, resources/ and logs/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fpa.containment import (ContainmentError, check_name, check_relative, inside,
                             outside_work_areas, planned_paths)
from fpa.errors import ConfigError
from fpa.planning import judge
from fpa.planning.counts import dry_run, experiment_configs

from hostile_input.fuzz_config import workflow_lines

ROOT = Path(__file__).resolve().parents[2]
BASE = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
TRAVERSAL = "../../../victim/test.jsonl"


@pytest.mark.parametrize("name", ["..", ".", ".hidden", "-rf", "_x", "a/b", "a b", "", "x\n", 1, None])
def test_a_name_that_a_path_would_read_otherwise_is_refused(name):
    with pytest.raises(ContainmentError, match=r"^here: expected a name of letters, .* got "):
        check_name(name, "here")


@pytest.mark.parametrize("path", [TRAVERSAL, "a/../../b", "/etc/passwd", "./a", "a/.", "a//b", "a/\nb", ""])
def test_a_relative_path_out_of_its_directory_is_refused(path):
    with pytest.raises(ContainmentError, match=r"^here: expected a relative path"):
        check_relative(path, "here")


def test_names_and_paths_that_stay_inside_pass():
    assert check_name("qwen2.5-math-7b", "here") == "qwen2.5-math-7b"
    assert check_relative("gsm8k a;b/test.jsonl", "here") == "gsm8k a;b/test.jsonl"  # quoted by every job
    assert inside("mirror", "a/b.jsonl", "here") == Path("mirror/a/b.jsonl")
    with pytest.raises(ContainmentError, match=r"^here: '\.\./x' leads to .*, outside "):
        inside("mirror", "../x", "here")
    assert outside_work_areas(["results/a", "logs/b.log", "resources/data/x", "results/../../v", "/v", "x"],
                              "/w") == ["results/../../v", "/v", "x"]


def _catalog_with(tmp_path: Path, path: str) -> Path:
    catalog = tmp_path / "catalog.yaml"
    entry = {"path": path, "sha256": "0" * 64, "url": "https://example.invalid/x", "upstream_format": "jsonl",
             "loader": "gsm8k", "records": 20}
    catalog.write_text(yaml.safe_dump({"benchmarks": {"gsm8k": entry}}))
    return catalog


def _config_file(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _catalog_config(tmp_path: Path, catalog_path: str) -> Path:
    config = {**BASE, "data": {"catalog": str(_catalog_with(tmp_path, catalog_path))},
              "benchmarks": {**BASE["benchmarks"], "gsm8k": {"source": "catalog", "parts": ["gsm8k"],
                                                              "grader": "math"}}}
    return _config_file(tmp_path, config)


def test_a_catalog_path_out_of_resources_is_refused_when_the_catalog_is_read(tmp_path):
    config = _catalog_config(tmp_path, TRAVERSAL)
    with pytest.raises(ConfigError) as info:
        judge([config])
    assert str(info.value) == (f"{tmp_path}/catalog.yaml: benchmarks.gsm8k.path: expected a relative path of "
                               f"names joined by '/', without '.', '..', empty names or control characters, got "
                               f"{TRAVERSAL!r}")


def _renamed(section: str, name: str) -> dict:
    """The base config with one more entry of ``section`` named ``name`` (or ``name`` as the experiment)."""
    if section == "experiment":
        return {**BASE, "experiment": name}
    first = next(iter(BASE[section]))
    return {**BASE, section: {name: BASE[section][first], **BASE[section]}}


@pytest.mark.parametrize("section", ["models", "methods", "benchmarks", "tables", "experiment"])
@pytest.mark.parametrize("name", ["..", "."])
def test_a_dot_name_is_refused_before_planning_ends(tmp_path, section, name):
    with pytest.raises(ConfigError) as info:
        judge([_config_file(tmp_path, _renamed(section, name))])
    message = str(info.value)
    assert message.startswith(f"{tmp_path}/config.yaml: {section}") and f"got {name!r}" in message, message
    assert "\n" not in message


def _snakemake_n(workdir: Path, config: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-d", str(workdir),
                           "--configfile", str(config)], capture_output=True, text=True, timeout=300, cwd=ROOT)


@pytest.mark.parametrize("case", ["catalog", "experiment"])
def test_snakemake_dry_run_refuses_a_traversal_with_check_configs_line(tmp_path, case):
    config = _catalog_config(tmp_path, TRAVERSAL) if case == "catalog" else \
        _config_file(tmp_path, _renamed("experiment", ".."))
    checked = subprocess.run([sys.executable, "-m", "fpa", "check-config", str(config)], capture_output=True,
                             text=True, timeout=120)
    planned = _snakemake_n(tmp_path / "work", config)
    assert checked.returncode == 2 and planned.returncode != 0
    line = checked.stderr.strip().removeprefix("fpa check-config: error: ")
    assert "\n" not in line and workflow_lines(planned.stderr) == [f"config error: {line}"], planned.stderr[-2000:]
    assert not (tmp_path / "work" / "results").exists() and not (tmp_path.parent / "victim").exists()


@pytest.mark.parametrize("config", experiment_configs(ROOT), ids=lambda path: path.name)
def test_every_planned_output_and_log_of_a_shipped_config_is_inside_the_work_directory(config):
    paths = planned_paths(dry_run(config, ROOT))
    assert len(paths) > 10 and any(path.startswith("logs/") for path in paths)
    assert outside_work_areas(paths, "/work-directory") == []

