"""The rules' conda environments (envs/*.yaml) hold one definition of each pin: a package that
pyproject.toml pins (its dependencies and extras) is pinned alike in every env that installs it
(conda cannot include one env file in another, and Snakemake hashes each env file alone, so the
envs repeat the pins and this test keeps them one); and an env whose jobs grade math installs the
math extra."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ENVS = sorted((ROOT / "envs").glob("*.yaml"))


def _pins(requirements) -> dict[str, str]:
    """name (lower case, '-' for '_') -> version of each ``name==version``."""
    found = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;#]+)", requirement.strip())
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
PINNED = _pins(PROJECT["dependencies"] + [r for extra in PROJECT["optional-dependencies"].values() for r in extra])


def _env_pins(path: Path) -> dict[str, str]:
    dependencies = yaml.safe_load(path.read_text())["dependencies"]
    return _pins(next((item["pip"] for item in dependencies if isinstance(item, dict)), []))


@pytest.mark.parametrize("path", ENVS, ids=lambda path: path.name)
def test_each_env_pins_the_projects_packages_as_pyproject_does(path):
    pins = _env_pins(path)
    assert {name: version for name, version in pins.items() if PINNED.get(name, version) != version} == {}


def _rule_envs(rules_text: str) -> dict[str, str]:
    """rule -> the env file its ``conda:`` names (the generation rules' GENERATION_ENV: envs/train.yaml
    under the hf backend, the default)."""
    envs = {}
    for block in re.split(r"^\s*rule (?=\w+:)", rules_text, flags=re.M)[1:]:
        match = re.search(r"conda:\n\s+(?:\"\.\./\.\./envs/([\w-]+\.yaml)\"|(GENERATION_ENV))", block)
        if match:
            envs[block.split(":", 1)[0]] = match.group(1) or "train.yaml"
    return envs


def test_the_envs_of_the_jobs_that_grade_math_install_the_math_extra():
    rules = _rule_envs("\n".join(path.read_text() for path in (ROOT / "workflow" / "rules").glob("*.smk")))
    math = set(_pins(PROJECT["optional-dependencies"]["math"]))
    # build_dataset grades the samples, evaluate, curve and select_checkpoint the benchmarks
    for rule in ("build_dataset", "evaluate", "curve", "select_checkpoint"):
        assert math <= set(_env_pins(ROOT / "envs" / rules[rule])), (rule, rules[rule])
