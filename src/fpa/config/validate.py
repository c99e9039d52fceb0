"""A config validated as a whole, with one-line errors.

``check_config`` is the first step of the one judge of a config (``fpa.planning.judge``, which every
reader of a config calls): it checks the values are plain data and match the schema, fills the
schema's defaults (``fpa.config.schema``), then checks what the schema cannot say: the catalog
entries a config uses (``fpa.config.catalog``), the graders (``fpa.config.graders``), the run grid
(``fpa.config.runs``), which it returns for the judge to pass on, and the settings whose jobs are
certain to fail (``fpa.config.feasible``). On any error it raises a
``ConfigError`` whose message is one line naming the file, the key path, what was expected and the
value received. The checks that need the figure, table-layout and resource registries (which
import this package) are in ``fpa.planning.validation``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from fpa.aggregation.grid import BASE_METHOD
from fpa.config.catalog import check_catalog_entry, load_catalog
from fpa.config.feasible import check_feasible
from fpa.config.graders import is_code_grader, reads_task_file, validation_grader
from fpa.config.runs import Run, expand_runs
from fpa.config.schema import check_against_schema, check_plain_data, fill_defaults, load_schema
from fpa.config.templates import check_prompt_template
from fpa.config.wildcards import check_read_path
from fpa.data.dataset_files import DATASET_FILES
from fpa.errors import ConfigError


def check_config(config: dict, where: str = "config") -> dict[tuple[str, str], Run]:
    """Validate ``config`` in place (defaults filled) and return its run grid (``expand_runs``, built
    once here); one-line ``ConfigError`` otherwise."""
    schema = load_schema()
    check_plain_data(config, where)
    check_against_schema(config, schema, where)
    fill_defaults(config, schema)
    return _check_semantics(config, where, schema)


def _check_semantics(config: dict, where: str, schema: dict) -> dict[tuple[str, str], Run]:
    for name, model in config["models"].items():
        if model["source"] == "hub" and "hub_id" not in model:
            raise ConfigError(f"{where}: models.{name}.hub_id: required for source 'hub'")
        check_prompt_template(model["prompt_template"], f"{where}: models.{name}.prompt_template")
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
            check_read_path(bench["path"], f"{where}: benchmarks.{name}.path")
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
                family = catalog[section][part]["loader"]
                if section == "code" and family != bench["grader"]:  # one family makes the prompts and grades them
                    raise ConfigError(f"{where}: benchmarks.{name}.grader: part {part!r} is read by the family "
                                      f"{family!r} (its catalog loader), which grades it; expected {family!r}, "
                                      f"got {bench['grader']!r}")
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
    check_feasible(config, runs, where)
    _check_model_selection(config, runs, where)
    _check_online(config, runs, where)
    return runs


def _check_sampled_benchmark(config: dict, name: str, key: str, where: str) -> None:
    """``name`` (at config ``key``) is a benchmark that a snapshot is sampled and graded on in one job."""
    if name not in config["benchmarks"]:
        raise ConfigError(f"{where}: {key}: unknown benchmark {name!r}; expected one of {sorted(config['benchmarks'])}")
    grader = config["benchmarks"][name]["grader"]
    if reads_task_file(grader):
        from fpa.grading import GRADERS

        in_record = [other for other in GRADERS if not reads_task_file(other)]
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
    from fpa.grading import dataset_graders

    online = next((run.method for run in runs.values() if run.online), None)
    if online is None:
        return
    grader = dataset_graders().get(config["dataset"]["source"])
    if grader is None or is_code_grader(grader):
        raise ConfigError(f"{where}: methods.{online}.online: online methods train on the training problems of a "
                          f"math or toy dataset, rewarded by its grader; dataset.source "
                          f"{config['dataset']['source']!r} has none")

