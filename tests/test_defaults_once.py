"""A default the library writes again agrees with the schema's: ``TrainConfig`` (built without a
config by tests and benchmarks; its formats in torch's names, as a job reads them: ``job_training``) and a
table's layout (a plain list is its columns) take every
default the schema gives, key for key (True is not 1; 1024 is 1024.0)."""

from __future__ import annotations

import dataclasses

from fpa.aggregation.layout import normalise_table
from fpa.config.schema import load_schema
from fpa.planning.stage import job_training
from fpa.training.session import TrainConfig


def _typed(defaults: dict) -> dict:
    return {name: (isinstance(value, bool), value) for name, value in defaults.items()}


def schema_defaults(definition: str) -> dict:
    """The default of each property of ``$defs.<definition>`` that has one."""
    properties = load_schema()["$defs"][definition]["properties"]
    return {name: spec["default"] for name, spec in properties.items() if "default" in spec}


def test_train_config_has_the_schemas_training_keys_and_defaults():
    fields = {field.name: list(field.default) if isinstance(field.default, tuple) else field.default
              for field in dataclasses.fields(TrainConfig)}
    assert _typed(fields) == _typed(job_training(schema_defaults("training")))


def test_a_table_is_filled_with_the_schemas_table_defaults():
    filled = normalise_table(["toy6"])
    assert filled.pop("columns") == ["toy6"]
    assert _typed(filled) == _typed(schema_defaults("table"))
