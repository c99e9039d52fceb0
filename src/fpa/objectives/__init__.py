"""The method registry: objective name -> ``Objective``.

Adding a method is adding one module here and one line to ``_MODULES``; the
trainer never changes. Every list of method names (config schema enum, docs,
``fpa methods``) is derived from ``OBJECTIVES``.
"""

from __future__ import annotations

import importlib

from fpa.objectives.base import Objective, SequenceStats

_MODULES = ("offrl", "fpa", "sft", "dpo", "rpo", "dpop", "kto", "apo", "offrl_kl")


def _collect() -> dict[str, Objective]:
    registry: dict[str, Objective] = {}
    for module_name in _MODULES:
        module = importlib.import_module(f"fpa.objectives.{module_name}")
        for objective in module.OBJECTIVES:
            if objective.name in registry:
                raise ValueError(f"objective {objective.name!r} registered twice")
            registry[objective.name] = objective
    return registry


OBJECTIVES: dict[str, Objective] = _collect()


def get_objective(name: str) -> Objective:
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}; expected one of {sorted(OBJECTIVES)}") from None


def module_of(name: str) -> str:
    """Dotted module that defines objective ``name`` (for code fingerprints)."""
    return get_objective(name).loss.__module__


__all__ = ["OBJECTIVES", "Objective", "SequenceStats", "get_objective", "module_of"]
