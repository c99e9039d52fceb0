"""The run grid: models × methods × sweep points, each a ``Run`` (a table row) with its parsed
params and merged training settings."""

from __future__ import annotations

import dataclasses
import itertools
import json
from dataclasses import dataclass
from typing import Mapping

from fpa.config.schema import check_against_schema, load_schema
from fpa.config.wildcards import check_wildcard_value
from fpa.containment import check_name
from fpa.errors import ConfigError
from fpa.objectives import get_objective
from fpa.online import get_online_method

# a sweep key "lam_w=lam_l" sets both settings to each value (the paper tunes KTO with λ_w = λ_l)
TIED = "="
#: the wildcard of the rules' path templates that a run's name fills
RUN_WILDCARD = "method"


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

    def reads_reference_cache(self) -> bool:
        """Whether its training reads its model's reference cache: a cached-reference offline run, for
        the objective's own terms or only the logged log-ratio diagnostics (training.diagnostics)."""
        return not self.online and self.training["reference"] == "cached" and (
            get_objective(self.objective).needs_reference or self.training["diagnostics"])


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
    made_by: dict[str, tuple[tuple[str, str], str]] = {}  # run name -> (method, point) that makes it, and where
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
            swept_at = f"models.{model_name}.sweep.{name}" if name in model.get("sweep", {}) \
                else f"methods.{name}.sweep"
            for point in grid:
                run_name = _run_name(made_by, name, point, swept_at, where)
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


def _run_name(made_by: dict, method: str, point: dict, swept_at: str, where: str) -> str:
    """The name of ``method``'s run at sweep ``point`` (swept at the config key ``swept_at``): a path
    segment and wildcard value the workflow holds, made by this method and point alone (on every model it
    trains on); two makers of one name would train, evaluate and fill a row in one set of files.
    ``made_by``: run name -> (method, point) that made it first, and where."""
    run_name = method + "".join(f"_{key.replace(TIED, '-')}{value}" for key, value in point.items())
    if run_name not in made_by:  # a name of several models is checked once
        check_name(run_name, f"{where}: methods.{method}: run name")
        check_wildcard_value(run_name, RUN_WILDCARD, f"{where}: methods.{method}: run name")
    source = f"{swept_at} {', '.join(f'{key}={value}' for key, value in point.items())}" if point \
        else f"methods.{method}"
    maker = (method, json.dumps(point, sort_keys=True))
    first = made_by.setdefault(run_name, (maker, source))
    if first[0] != maker:
        raise ConfigError(f"{where}: {first[1]} and {source} both make the run {run_name!r}; expected one method "
                          "or sweep point per run name (rename the method)")
    return run_name


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
