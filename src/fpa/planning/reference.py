"""The helpers of ``workflow/rules/reference.smk``: the base model's log-probabilities cached for training.

A model's cache is built once, with the top-level training settings (``cache_settings``), and read by
each of the model's runs whose training reads a cached reference (``Run.reads_reference_cache``). A run
whose own settings build another cache (a ``max_length`` the cache's tokens were not cut at, another
precision or dtype) would stop mid-training, or read values the cache does not hold for it: the judge
refuses it (``check_reference_cache``), naming the run's key and the top-level one.
"""

from __future__ import annotations

from typing import Mapping

from fpa.config.feasible import training_key
from fpa.config.runs import Run
from fpa.errors import ConfigError
from fpa.memory.training import compute_weights_dtype, reference_cache_dtype
from fpa.planning.stage import Stage, job_training
from fpa.resources import job_device

#: what a reference cache depends on beside its model and dataset -> the training keys it is made of
CACHE_SETTINGS = {"max_length": ("max_length",), "precision": ("precision",), "attention": ("attention",),
                  "weights_dtype": ("parallel", "fsdp_param_dtype", "precision"), "dtype": ("head_precision",)}


def cache_settings(training: Mapping, train_device: str) -> dict:
    """The settings a cache is built with for ``training`` on ``train_device`` (``cuda``, ``cpu``): the
    tokens cut at ``max_length``, the forward's precision, attention and weights dtype (the policy's, as
    its training job reads it: ``job_training``), and the dtype z_ref is stored in (``reference_cache_dtype``)."""
    return {"max_length": training["max_length"], "precision": training["precision"],
            "attention": training["attention"], "weights_dtype": compute_weights_dtype(job_training(training)),
            "dtype": reference_cache_dtype(training, train_device)}


class ReferenceStage(Stage):
    def settings(self) -> dict:
        """The settings rule cache_reference builds a model's cache with: the top-level training's."""
        return cache_settings(self.config["training"], self.plan.device("train"))


def check_reference_cache(config: Mapping, runs: Mapping[tuple[str, str], Run], where: str) -> None:
    """Each run that reads its model's reference cache trains with the settings the cache is built with."""
    device = job_device(config, "train")
    built = cache_settings(config["training"], device)
    for (model, name), run in runs.items():
        if not run.reads_reference_cache():
            continue
        wanted = cache_settings(run.training, device)
        setting = next((setting for setting in CACHE_SETTINGS if wanted[setting] != built[setting]), None)
        if setting is None:
            continue
        key = next(key for key in CACHE_SETTINGS[setting] if run.training.get(key) != config["training"].get(key))
        raise ConfigError(f"{where}: {training_key(config, model, run, key)}: {run.training.get(key)!r} differs from "
                          f"training.{key}: {config['training'].get(key)!r}, with which the reference cache of model "
                          f"{model!r} is built ({setting} {built[setting]!r}; run {name!r} reads it at "
                          f"{wanted[setting]!r}); "
                          f"expected the top-level value, or training.reference: online for this run")

