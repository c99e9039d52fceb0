"""Overrides as Snakemake users write them: a nested ``--config`` value, which Snakemake reads with YAML's
BaseLoader (every nested scalar a string), is typed as the same value in a config file; a value the
config refuses is refused naming ``--config``; a user's file layered on the default
(``--configfile config/config.yaml mine.yaml``) overrides it key by key."""

from __future__ import annotations

from pathlib import Path

import pytest
from snakemake.cli import parse_config

from fpa.errors import ConfigError
from fpa.planning import judge
from fpa.planning.judge import typed_as_yaml

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = ROOT / "config" / "config.yaml"


def test_snakemakes_nested_strings_are_typed_as_a_config_file_types_them():
    parsed = parse_config(["methods={fpa: {params: {lam: 2.0}}}", "seeds=[1, 2]", "evaluate_base={a: true, b: null}"])
    assert parsed["methods"]["fpa"]["params"]["lam"] == "2.0"  # what Snakemake hands the workflow
    assert typed_as_yaml(parsed) == {"methods": {"fpa": {"params": {"lam": 2.0}}}, "seeds": [1, 2],
                                     "evaluate_base": {"a": True, "b": None}}
    assert typed_as_yaml({"label": "w/ FPA", "path": "a: b", "lr": "1.0e-6"}) == {
        "label": "w/ FPA", "path": "a: b", "lr": 1e-6}


def test_a_nested_config_value_reaches_the_run():
    plan = judge([DEFAULT], overrides=parse_config(["methods={fpa: {params: {lam: 2.0}}}"]))
    assert plan.runs[("toy", "fpa")].params["lam"] == 2.0
    assert plan.runs[("toy", "fpa")].objective == "fpa"  # the other keys of methods.fpa are the file's


def test_a_refused_config_value_names_the_command_line():
    with pytest.raises(ConfigError, match=r"^.*config\.yaml with --config: methods\.fpa\.params\.lam: expected a "
                                          r"number, got 'abc'$"):
        judge([DEFAULT], overrides=parse_config(["methods={fpa: {params: {lam: abc}}}"]))


def test_a_users_file_layered_on_the_default_overrides_it_key_by_key(tmp_path):
    mine = tmp_path / "mine.yaml"
    mine.write_text("methods:\n  fpa: {params: {lam: 2.0}}\nseeds: [7]\n")
    plan = judge([DEFAULT, mine])
    assert plan.runs[("toy", "fpa")].params["lam"] == 2.0 and plan.runs[("toy", "fpa")].seeds == (7,)
    assert set(plan.runs) == set(judge([DEFAULT]).runs)  # the default's other methods stay
