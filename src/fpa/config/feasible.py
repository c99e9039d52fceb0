"""Settings valid one by one whose jobs the config alone says will fail, refused before any job runs
(issue 52), each with one ``ConfigError`` naming the file, the key, what was expected and the value:

- a toy model's settings, built as rule ``toy_base_model`` builds them (``fpa.toy.settings``; its own
  prompt_template holding ``{problem}``), and no chat template (the toy tokenizer has none);
- a model's ``architecture``, read as the memory planner reads it (``fpa.memory.architecture``);
- the toy training chains, ``dataset.min_operands`` .. ``n_operands`` (``fpa.toy.task.chain_lengths``);
- a ``source: validation`` benchmark of a dataset that holds out no problem (validation_fraction 0);
- a ``training.max_length`` that a toy model's longest training prompt fills (a toy token is a byte,
  ``fpa.toy.tokenizer.token_count``): the reference cache and training refuse a prompt that leaves no
  completion token.

What needs the data (a hub tokenizer's prompt lengths, a file benchmark's gold answers) is checked
by the first job that reads it (``fpa.data.validate``).
"""

from __future__ import annotations

from typing import Mapping

from fpa.config.runs import TIED, Run
from fpa.config.templates import check_prompt_template
from fpa.errors import ConfigError
from fpa.memory.architecture import check_fields
from fpa.samples.prompts import PLACEHOLDER, render_prompt
from fpa.toy.settings import toy_model_config
from fpa.toy.task import chain_lengths
from fpa.toy.tokenizer import token_count


def check_feasible(config: Mapping, runs: Mapping[tuple[str, str], Run], where: str) -> None:
    """Refuse what the module docstring lists; ``runs``: the config's expanded run grid."""
    for name, model in config["models"].items():
        if "architecture" in model:
            _refuse(check_fields, model["architecture"], where, f"models.{name}.architecture.")
        if model["source"] == "toy":
            _check_toy_model(name, model, where)
    dataset = config["dataset"]
    if dataset["source"] == "toy":
        _refuse(chain_lengths, dataset["n_operands"], dataset["min_operands"], prefix=f"{where}: dataset.")
    for name, bench in config["benchmarks"].items():
        if bench["source"] == "validation" and not dataset["validation_fraction"]:
            raise ConfigError(f"{where}: benchmarks.{name}.source: a validation benchmark is the dataset's held-out "
                              f"problems; expected dataset.validation_fraction > 0, got {dataset['validation_fraction']}")
    _check_prompt_budget(config, runs, where)


def _refuse(check, *args, prefix: str = ""):
    """``check(*args)``, its ``ValueError`` raised as a ``ConfigError`` (its message after ``prefix``)."""
    try:
        return check(*args)
    except ValueError as error:
        raise ConfigError(f"{prefix}{error}") from None


def _check_toy_model(name: str, model: Mapping, where: str) -> None:
    settings = _refuse(toy_model_config, model["toy"], model["prompt_template"], prefix=f"{where}: models.{name}.toy.")
    check_prompt_template(settings.prompt_template, f"{where}: models.{name}.toy.prompt_template")
    if model["chat_template"]:
        raise ConfigError(f"{where}: models.{name}.chat_template: a toy model's tokenizer has no chat template; "
                          "expected false, got true")


def _check_prompt_budget(config: Mapping, runs: Mapping[tuple[str, str], Run], where: str) -> None:
    """Each toy model's longest training prompt leaves a completion token within the ``max_length`` of
    its reference cache (the top-level setting, where a run reads the cache) and of each offline run."""
    dataset = config["dataset"]
    toy_chains = dataset["source"] == "toy"
    # a chain of n operands is 2n - 1 digits and signs, each a byte (a token) more than one digit
    extra = 2 * dataset["n_operands"] - 2 if toy_chains else 0
    why = (f"a {dataset['n_operands']}-operand chain, dataset.n_operands" if toy_chains
           else "a problem of one character, the shortest")
    for model_name, model in config["models"].items():
        if model["source"] != "toy":
            continue  # a hub tokenizer's token counts need its files: the check_prompt_budget job
        template = model["prompt_template"]
        longest = token_count(render_prompt(template, "9")) + extra * template.count(PLACEHOLDER)
        for key, max_length in max_length_settings(config, runs, model_name):
            if max_length <= longest:
                raise ConfigError(f"{where}: {key}: expected more than the {longest} tokens of the longest training "
                                  f"prompt of model {model_name!r} (its prompt_template with {why}; a prompt must "
                                  f"leave a completion token), got {max_length}")


def max_length_settings(config: Mapping, runs: Mapping[tuple[str, str], Run], model: str) -> list[tuple[str, int]]:
    """``[(key path, max_length)]`` that ``model``'s training prompts must fit: its reference cache's (the
    top-level setting, where a run reads the cache) and each of its offline runs', each pair once, the
    shortest first. (Once: the check job's params, so that a run added with a setting already checked
    re-runs neither the check nor the sampling below it.)"""
    offline = [run for (owner, _), run in runs.items() if owner == model and not run.online]
    settings = {(training_key(config, model, run, "max_length"), run.training["max_length"]) for run in offline}
    if any(run.reads_reference_cache() for run in offline):
        settings.add(("training.max_length", config["training"]["max_length"]))
    return sorted(settings, key=lambda setting: (setting[1], setting[0]))


def training_key(config: Mapping, model: str, run: Run, key: str) -> str:
    """The key path that sets ``run``'s training ``key``: its sweep, its method's, its model's or the
    top-level training settings, whichever comes first (``fpa.config.runs.expand_runs``)."""
    swept = next((point for point in run.point if key in point.split(TIED)), None)
    if swept is not None:
        on_model = run.method in config["models"][model].get("sweep", {})
        return f"models.{model}.sweep.{run.method}.{swept}" if on_model else f"methods.{run.method}.sweep.{swept}"
    if key in config["methods"][run.method].get("training", {}):
        return f"methods.{run.method}.training.{key}"
    if key in config["models"][model].get("training", {}):
        return f"models.{model}.training.{key}"
    return f"training.{key}"
