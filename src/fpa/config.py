"""Configuration: schema validation with one-line errors, and the expanded run grid.

``validate_config`` is what ``fpa.planning.validate_config`` calls first: it fills the
schema's defaults through ``snakemake.utils.validate`` and, on any error, raises a
``ConfigError`` whose message is one line naming the file, the key path, what was
expected and the value received. The checks that need the figure, table-layout and
resource registries (which import this module) are in ``fpa.planning.validation``.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import jsonschema

from fpa.objectives import get_objective
from fpa.online import get_online_method
from fpa.yaml_strict import YamlFileError, load_yaml

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = PROJECT_ROOT / "workflow" / "schemas" / "config.schema.yaml"
RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# a sweep key "lam_w=lam_l" sets both settings to each value (the paper tunes KTO with λ_w = λ_l)
TIED = "="
BASE_METHOD = "base"


class ConfigError(ValueError):
    """A configuration error; ``str()`` is a single line."""


@dataclass(frozen=True)
class Run:
    """One trainable method of the grid: a table row."""

    name: str
    objective: str
    params: dict
    training: dict
    method: str = ""  # the config's method (``methods.<method>``) this run expands
    point: dict = dataclasses.field(default_factory=dict)  # its sweep point, e.g. {"lam": 2}
    seeds: tuple[int, ...] = ()  # ``methods.<method>.seeds``, else the top-level seeds
    # the run whose training (and evaluation) this run's results are: itself, or an earlier run of the
    # same model trained exactly alike on a superset of its seeds (a sweep member equal to a main run)
    trained_as: str = ""
    online: bool = False  # ``objective`` names an online method (fpa.online), trained by rule train_online

    def __post_init__(self):
        if not self.trained_as:
            object.__setattr__(self, "trained_as", self.name)

    def config_slice(self) -> dict:
        return {"objective": self.objective, "params": self.params, "training": self.training}


def load_schema(path: str | Path = SCHEMA_PATH) -> dict:
    """The config schema; a fresh copy of the file parsed once per process (libyaml when available)."""
    return copy.deepcopy(_parse_schema(str(path)))


@functools.lru_cache(maxsize=None)
def _parse_schema(path: str) -> dict:
    return load_yaml(path)


# An integer is an int: JSON Schema also counts 44.0, which the `seed=\d+` wildcard and range() refuse.
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)))


def _setting_defaults(validator_class):
    """``validator_class`` that sets each absent property's default as it validates an object: the
    JSON Schema FAQ's extension, which Snakemake's ``validate(set_default=True)`` also uses."""
    validate_properties = validator_class.VALIDATORS["properties"]

    def properties_with_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if "default" in subschema:
                    instance.setdefault(name, copy.deepcopy(subschema["default"]))
        yield from validate_properties(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": properties_with_defaults})


_DefaultsValidator = _setting_defaults(_Validator)


def fill_defaults(config: dict, schema: Mapping) -> dict:
    """``config`` (valid for ``schema``) with the schema's defaults filled in place, as Snakemake's
    ``validate(set_default=True)`` fills them, without its second reading of the schema file and
    its pandas import."""
    _DefaultsValidator(schema).validate(config)
    return config


def _describe(error: jsonschema.ValidationError) -> str:
    kind, expected, got = error.validator, error.validator_value, error.instance
    if kind == "enum":
        return f"expected one of {expected}, got {got!r}"
    if kind == "type":
        return f"expected {expected}, got {got!r}"
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        sign = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}[kind]
        return f"expected number {sign} {expected}, got {got!r}"
    if kind == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown key")
    if kind == "required":
        return error.message
    if kind == "uniqueItems":
        return f"expected distinct values, got {got!r}"
    if kind in ("minProperties", "minItems"):
        return f"expected at least {expected} {'entry' if expected == 1 else 'entries'}, got {got!r}"
    return f"{error.message}"


def _key_path(parts) -> str:
    return ".".join(str(p) for p in parts) or "<top level>"


def check_against_schema(config: Mapping, schema: Mapping, where: str) -> None:
    """Raise ``ConfigError`` for the most relevant schema violation, if any."""
    validator = _Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(config))
    if error is not None:
        path = list(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            path = path + extra[:1]
            raise ConfigError(f"{where}: {_key_path(path)}: unknown key; expected one of "
                              f"{sorted(error.schema.get('properties', {}))}")
        raise ConfigError(f"{where}: {_key_path(path)}: {_describe(error)}")


def validate_config(config: dict, where: str = "config", schema_path: str | Path = SCHEMA_PATH) -> dict:
    """Validate ``config`` in place (defaults filled) and return it; one-line ``ConfigError`` otherwise."""
    schema = load_schema(schema_path)
    _refuse_non_finite(config, where)
    check_against_schema(config, schema, where)
    fill_defaults(config, schema)
    _check_semantics(config, where, schema)
    return config


def read_config_file(path: str | Path) -> dict:
    """The mapping in a YAML config file; ``ConfigError`` naming file and line for a syntax error or a
    duplicate key."""
    try:
        config = load_yaml(path)
    except YamlFileError as error:
        raise ConfigError(str(error)) from None
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror} ({Path(path).absolute()})") from None
    return {} if config is None else config


def _refuse_non_finite(node, where: str, path: tuple = ()) -> None:
    """NaN and infinity pass every JSON Schema bound (and YAML writes them .nan, .inf): refused everywhere."""
    if isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{where}: {_key_path(path)}: expected a finite number, got {node!r}")
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        _refuse_non_finite(child, where, (*path, key))


def _check_semantics(config: dict, where: str, schema: dict) -> None:
    for name, model in config["models"].items():
        if model["source"] == "hub" and "hub_id" not in model:
            raise ConfigError(f"{where}: models.{name}.hub_id: required for source 'hub'")
    catalog = None
    for name, bench in config["benchmarks"].items():
        if bench["source"] == "validation":
            expected = validation_grader(config["dataset"]["source"])
            if bench["grader"] != expected:
                raise ConfigError(f"{where}: benchmarks.{name}.grader: a validation benchmark is graded as its "
                                  f"dataset ({config['dataset']['source']}): expected {expected!r}, got {bench['grader']!r}")
        if bench["source"] == "file":
            if "path" not in bench:
                raise ConfigError(f"{where}: benchmarks.{name}.path: required for source 'file'")
            if not Path(bench["path"]).is_file():
                raise ConfigError(f"{where}: benchmarks.{name}.path: file not found: {bench['path']}")
        if bench["source"] == "catalog":
            catalog = catalog or load_catalog(config, where)
            if "parts" not in bench:
                raise ConfigError(f"{where}: benchmarks.{name}.parts: required for source 'catalog'")
            # Code columns: one file of the catalog's code section (the grader reads its tests).
            section = "code" if is_code_grader(bench["grader"]) else "benchmarks"
            if section == "code" and len(bench["parts"]) != 1:
                raise ConfigError(f"{where}: benchmarks.{name}.parts: a code benchmark has exactly one part "
                                  f"(its task file), got {bench['parts']}")
            for part in bench["parts"]:
                check_catalog_entry(catalog, section, part, config, f"{where}: benchmarks.{name}.parts")
    for section, part in DATASET_FILES.get(config["dataset"]["source"], ()):
        catalog = catalog or load_catalog(config, where)
        check_catalog_entry(catalog, section, part, config, f"{where}: dataset.source")
    for column in config["curve_benchmarks"]:
        _check_sampled_benchmark(config, column, "curve_benchmarks", where)
    future = config["future_policy"]
    if future["anchor_step"] is not None and any(step <= future["anchor_step"] for step in future["target_steps"]):
        raise ConfigError(f"{where}: future_policy.target_steps: expected steps after anchor_step "
                          f"{future['anchor_step']}, got {future['target_steps']}")
    if not config["methods"] and not config["evaluate_base"]:  # what else needs runs: fpa.planning.validation
        raise ConfigError(f"{where}: methods: empty and evaluate_base is false, so no table has a row; "
                          "name at least one method or set evaluate_base: true")
    if BASE_METHOD in config["methods"]:
        raise ConfigError(f"{where}: methods.{BASE_METHOD}: reserved for the untrained model's row")
    runs = expand_runs(config, where, schema)
    _check_model_selection(config, runs, where)
    _check_online(config, runs, where)


def _check_sampled_benchmark(config: dict, name: str, key: str, where: str) -> None:
    """``name`` (at config ``key``) is a benchmark that a snapshot is sampled and graded on in one job."""
    if name not in config["benchmarks"]:
        raise ConfigError(f"{where}: {key}: unknown benchmark {name!r}; expected one of {sorted(config['benchmarks'])}")
    grader = config["benchmarks"][name]["grader"]
    if reads_task_file(grader):
        from fpa.grading import GRADER_NAMES

        in_record = [other for other in GRADER_NAMES if not reads_task_file(other)]
        raise ConfigError(f"{where}: {key}: {name!r} is graded by {grader!r}, which reads its benchmark's task file "
                          f"in an evaluate_code job; snapshots are sampled and graded in one job (graders whose "
                          f"answer is in the record: {', '.join(in_record)})")


def _check_model_selection(config: dict, runs: Mapping, where: str) -> None:
    """Selection chooses among every snapshot by validation accuracy: each run takes snapshots, and
    none stops on validation loss first (whose early stop would also make its final checkpoint the
    best-loss weights rather than the last step's)."""
    selection = config["model_selection"]
    if selection is None:
        return
    _check_sampled_benchmark(config, selection["benchmark"], "model_selection.benchmark", where)
    for (model, name), run in runs.items():
        if not run.training["snapshot_every"]:
            raise ConfigError(f"{where}: model_selection: run {name!r} of model {model!r} takes no snapshots "
                              "(training.snapshot_every: 0); expected > 0 to choose among them")
        if run.training["early_stopping_patience"] and not run.online:
            raise ConfigError(f"{where}: model_selection: run {name!r} of model {model!r} stops early on validation "
                              f"loss (training.early_stopping_patience: {run.training['early_stopping_patience']}); "
                              "expected 0: the selection's early stopping is on validation accuracy")


def _check_online(config: dict, runs: Mapping, where: str) -> None:
    """Online runs train on the dataset's sampled training problems, rewarded by its (non-code) grader."""
    from fpa.data.offline import DATASET_GRADER

    online = next((run.method for run in runs.values() if run.online), None)
    if online is None:
        return
    grader = DATASET_GRADER.get(config["dataset"]["source"])
    if grader is None or is_code_grader(grader):
        raise ConfigError(f"{where}: methods.{online}.online: online methods train on the training problems of a "
                          f"math or toy dataset, rewarded by its grader; dataset.source "
                          f"{config['dataset']['source']!r} has none")


#: (section, entry) of the catalog files each catalog-built ``dataset.source`` reads.
DATASET_FILES = {
    # the 12K MATH training split, and MATH-P, which it must exclude
    "math12k": (("training", "math_train"), ("training", "math_test"), ("benchmarks", "math500"),
                ("benchmarks", "math_perturb_simple"), ("benchmarks", "math_perturb_hard")),
    # the code training problems, in priority order
    "taco_apps": (("code", "taco_train"), ("code", "apps_train")),
    # the Step-DPO preference pairs (fpa.data.step_dpo)
    "step_dpo": (("preference", "math_step_dpo"),),
}
MATH12K_FILES = tuple(part for _, part in DATASET_FILES["math12k"])
CODE_TRAIN_FILES = tuple(part for _, part in DATASET_FILES["taco_apps"])
STEP_DPO_FILE = DATASET_FILES["step_dpo"][0][1]


def is_code_grader(grader: str) -> bool:
    """Graders that execute code in the sandbox (those of them that read a task file:
    ``reads_task_file``)."""
    from fpa.grading import CODE_GRADERS

    return grader in CODE_GRADERS


def reads_task_file(grader: str) -> bool:
    """Graders whose answer is a task id looked up in the benchmark's task file (the code benchmarks'
    own checks): rules ``generate_code`` + ``evaluate_code`` pass them that file. Every other grader,
    the code training reward included (its answer is the test spec), grades in the job that samples."""
    from fpa.data.offline import DATASET_GRADER

    return is_code_grader(grader) and grader not in DATASET_GRADER.values()


def validation_grader(dataset_source: str) -> str:
    """The grader of a ``source: validation`` benchmark: its dataset's (a sampled one's samples', or
    the Step-DPO pairs' final answers')."""
    from fpa.data.offline import DATASET_GRADER
    from fpa.data.step_dpo import ANSWER_GRADER

    return {**DATASET_GRADER, "step_dpo": ANSWER_GRADER}[dataset_source]


def load_catalog(config: Mapping, where: str) -> dict:
    path = Path(config["data"]["catalog"])
    if not path.is_absolute() and not path.is_file():
        path = PROJECT_ROOT / path  # relative to the workflow, as when run with -d elsewhere
    if not path.is_file():
        raise ConfigError(f"{where}: data.catalog: file not found: {config['data']['catalog']}")
    stat = path.stat()
    return copy.deepcopy(_read_catalog(str(path.resolve()), stat.st_mtime_ns, stat.st_size))


@functools.lru_cache(maxsize=None)
def _read_catalog(path: str, mtime_ns: int, size: int) -> dict:
    """Parsed once per process and file version (validation and common.smk both need it)."""
    from fpa.data.download import read_benchmarks_config

    try:
        return read_benchmarks_config(path)
    except ValueError as error:  # a syntax error, duplicate or missing key: one line naming file and key
        raise ConfigError(str(error)) from None


def check_catalog_entry(catalog: dict, section: str, name: str, config: Mapping, where: str) -> None:
    """The entry exists, has a source, and (with a mirror) its file is in the mirror."""
    entries = catalog.get(section, {})
    if name not in entries:
        raise ConfigError(f"{where}: unknown catalog entry {name!r}; expected one of {sorted(entries)}")
    entry = entries[name]
    if "missing" in entry:
        raise ConfigError(f"{where}: {name} has no source ({' '.join(entry['missing'].split())[:200]}...)")
    mirror = config["data"]["mirror"]
    if mirror is not None and not (Path(mirror) / entry["path"]).is_file():
        raise ConfigError(f"{where}: {name}: file not found in the mirror: {Path(mirror) / entry['path']}")


def expand_runs(config: Mapping, where: str = "config", schema: Mapping | None = None) -> dict[tuple[str, str], Run]:
    """Models × methods × sweeps → ``{(model, run name): Run}`` with parsed params and merged settings.

    Precedence of training settings: top-level < model < method < sweep point (a swept training key,
    e.g. ``lr``); of objective params: method < model (``models.<m>.params.<method>``) < sweep point.
    A model's ``sweep.<method>`` and ``seeds.<method>`` replace the method's on that model.
    """
    schema = schema or load_schema()
    training_schema = {**schema["$defs"]["training"], "$defs": schema["$defs"]}
    checked_trainings: set[str] = set()  # most runs share their merged training: each checked once
    runs: dict[tuple[str, str], Run] = {}
    for model_name, model in config["models"].items():
        for key in ("params", "sweep", "seeds"):  # per-method settings on this model
            unknown = sorted(set(model.get(key, {})) - set(config["methods"]))
            if unknown:
                raise ConfigError(f"{where}: models.{model_name}.{key}: unknown methods {unknown}; "
                                  f"expected some of {sorted(config['methods'])}")
        for name, method in config["methods"].items():
            unknown_models = sorted(set(method.get("models", config["models"])) - set(config["models"]))
            if unknown_models:
                raise ConfigError(f"{where}: methods.{name}.models: unknown models {unknown_models}; "
                                  f"expected some of {sorted(config['models'])}")
            if model_name not in method.get("models", config["models"]):
                continue
            if ("objective" in method) == ("online" in method):
                raise ConfigError(f"{where}: methods.{name}: expected exactly one of 'objective' (an offline "
                                  "objective) or 'online' (an online method)")
            online = "online" in method
            objective = get_online_method(method["online"]) if online else get_objective(method["objective"])
            sweep = model.get("sweep", {}).get(name, method.get("sweep")) or {}
            grid = [dict(zip(sweep, values)) for values in itertools.product(*sweep.values())] if sweep else [{}]
            for point in grid:
                run_name = name + "".join(f"_{key.replace(TIED, '-')}{value}" for key, value in point.items())
                if not RUN_NAME.match(run_name):
                    raise ConfigError(f"{where}: methods.{name}: run name {run_name!r} must match {RUN_NAME.pattern}")
                settings = {part: value for key, value in point.items() for part in key.split(TIED)}
                swept_training = {key: value for key, value in settings.items() if key in training_schema["properties"]}
                swept_params = {key: value for key, value in settings.items() if key not in swept_training}
                raw = {**method.get("params", {}), **model.get("params", {}).get(name, {}), **swept_params}
                try:
                    params = objective.parse_params(raw, f"{where}: methods.{name}.params")
                except ValueError as error:
                    raise ConfigError(str(error)) from None
                training = {**config["training"], **model.get("training", {}), **method.get("training", {}),
                            **swept_training}
                training_key = json.dumps(training, sort_keys=True, default=repr)
                if training_key not in checked_trainings:
                    check_against_schema(training, training_schema, f"{where}: methods.{name}.training")
                    checked_trainings.add(training_key)
                runs[(model_name, run_name)] = Run(run_name, objective.name, dataclasses.asdict(params), training,
                                                   name, point, _seeds(config, model, name),
                                                   online=online)
    return _share_trainings(runs)


def _seeds(config: Mapping, model: Mapping, method: str) -> tuple[int, ...]:
    """The seeds of ``method``'s runs on ``model``: ``models.<model>.seeds.<method>``, else
    ``methods.<method>.seeds``, else the top-level seeds."""
    return tuple(model.get("seeds", {}).get(method, config["methods"][method].get("seeds", config["seeds"])))


def _share_trainings(runs: dict[tuple[str, str], Run]) -> dict[tuple[str, str], Run]:
    """Each run with ``trained_as``: the first run of its model (config order) with the same objective,
    params and training (compared as values: a sweep's 1 equals a method's 1.0) on all of its seeds."""
    shared: dict[tuple[str, str], Run] = {}
    for (model, name), run in runs.items():
        source = next((other.name for (other_model, _), other in shared.items()
                       if other_model == model and other.trained_as == other.name
                       and other.config_slice() == run.config_slice() and set(run.seeds) <= set(other.seeds)),
                      name)
        shared[(model, name)] = dataclasses.replace(run, trained_as=source)
    return shared


def run_names(runs: Mapping[tuple[str, str], Run]) -> list[str]:
    """Table rows, in config order."""
    return list(dict.fromkeys(name for _, name in runs))


def load_config_file(path: str | Path) -> dict:
    """Read and validate a YAML config outside Snakemake (CLI, tests) as planning does."""
    return validate_config(read_config_file(path), where=str(path))


__all__ = ["ConfigError", "Run", "validate_config", "expand_runs", "is_code_grader", "load_config_file",
           "read_config_file", "reads_task_file", "run_names", "validation_grader"]
