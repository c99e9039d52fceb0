"""fpa.config.schema.fill_defaults fills a config's defaults exactly as Snakemake's validate(set_default=True),
which planning used before, for every config the project ships."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from snakemake.utils import validate as snakemake_validate

from fpa.config.schema import SCHEMA_PATH, check_against_schema, fill_defaults, load_schema, read_config_file

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p for p in [*ROOT.glob("config/*.yaml"), *ROOT.glob(".test/*/config.yaml")]
                 if p.name not in ("benchmarks.yaml", "paper_results.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_defaults_are_snakemakes(path):
    config = read_config_file(path)
    schema = load_schema()
    check_against_schema(config, schema, str(path))
    ours, theirs = fill_defaults(copy.deepcopy(config), schema), copy.deepcopy(config)
    snakemake_validate(theirs, str(SCHEMA_PATH), set_default=True)
    assert ours == theirs and ours != config


def test_a_default_is_a_copy_not_shared_between_configs():
    schema = load_schema()
    first, second = (fill_defaults(read_config_file(ROOT / "config" / "config.yaml"), schema) for _ in range(2))
    first["training"]["adam_betas"].append(0.5)
    assert second["training"]["adam_betas"] == [0.9, 0.999]
