"""The one judge of a config: every reader of a config (planning in ``workflow/rules/common.smk``,
``fpa check-config``, ``fpa lock``, ``fpa plan-memory``, the tests) calls ``judge`` (or, for a config
held in memory, ``judge_config``, which ``judge`` calls), so each accepts exactly what the others
accept and refuses it with the same line. A config is read and judged once per call, and its run
grid built once (``Plan.runs``).

    plan = judge(["config/paper.yaml"])          # fpa check-config config/paper.yaml
    plan = judge(CONFIG_FILES, workflow.basedir, workflow.config_settings.config, gpu_partition)  # planning
    plan.config, plan.runs                       # the judged config (defaults filled), its run grid

It reads each file with ``fpa.safe_load``'s limits (Snakemake's own reading of a ``--configfile``
is not what is judged: the rules are then given the judged config), merges them and Snakemake's
``--config`` values as Snakemake merges them, validates the result against the schema and the
registries, plans it (``Plan``: run grid, catalog, table layouts, figures) and checks that every
name and path it plans stays inside its directory (``fpa.containment``). Anything wrong is a
one-line ``ConfigError`` naming the file and the key, raised before any job is planned.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Mapping, Sequence

from fpa.config.schema import check_plain_data, read_config_file
from fpa.containment import ContainmentError
from fpa.errors import ConfigError
from fpa.planning.plan import Plan
from fpa.project import PROJECT_ROOT
from fpa.safe_load import scalar

COMMAND_LINE = "--config"


def judge(paths: Sequence[str | Path], basedir: str | Path = PROJECT_ROOT,
          overrides: Mapping | None = None, gpu_partition: str | None = None) -> Plan:
    """The plan of the config in ``paths`` (merged in order, then ``overrides``: Snakemake's
    ``--config``), its GPU jobs sent to ``gpu_partition`` (``Plan``); a one-line ``ConfigError`` for
    anything a plan cannot be made of."""
    if not paths:
        raise ConfigError("no config file given; expected at least one (snakemake --configfile, fpa check-config)")
    config: dict = {}
    for path in paths:
        merge(config, read_config_file(path))
    where = ", ".join(map(str, paths))
    if overrides:
        overrides = typed_as_yaml(dict(overrides))
        check_plain_data(overrides, COMMAND_LINE)
        merge(config, overrides)
        where = f"{where} with {COMMAND_LINE}"  # a refusal may be of a value --config set
    return judge_config(config, where, basedir, gpu_partition)


def typed_as_yaml(value: object) -> object:
    """Snakemake's ``--config`` values typed as a config file's: Snakemake reads a nested value with
    YAML's BaseLoader, every scalar a string (``methods={fpa: {params: {lam: 2.0}}}`` gives
    ``lam: '2.0'``); each such string is typed as YAML types it in a file (``fpa.safe_load.scalar``)."""
    if isinstance(value, Mapping):
        return {key: typed_as_yaml(item) for key, item in value.items()}
    if isinstance(value, list):
        return [typed_as_yaml(item) for item in value]
    return scalar(value) if isinstance(value, str) else copy.deepcopy(value)


def judge_config(config: dict, where: str = "config", basedir: str | Path = PROJECT_ROOT,
                 gpu_partition: str | None = None) -> Plan:
    """The plan of ``config`` judged as a file ``where`` holding it would be (its defaults filled in
    place): ``Plan.from_config``, a name or path that would leave its directory refused as a
    ``ConfigError``."""
    try:
        return Plan.from_config(config, basedir, where, gpu_partition)
    except ContainmentError as error:
        raise ConfigError(str(error)) from None


def merge(config: dict, update: Mapping) -> dict:
    """``update`` merged into ``config`` in place, mapping by mapping, as Snakemake merges config files
    and ``--config`` (``snakemake.utils.update_config``): a mapping's keys are updated one by one,
    any other value replaces what was there."""
    for key, value in update.items():
        if isinstance(value, Mapping):
            below = config.get(key)
            config[key] = merge(below if isinstance(below, dict) else {}, value)
        else:
            config[key] = value
    return config


__all__ = ["judge", "judge_config", "merge", "typed_as_yaml"]
