"""The method registry: objective name -> ``Objective``.

Adding a method is adding one module that declares its ``OBJECTIVES``: here, or in the user's own
package, named in the entry-point group ``fpa.objectives`` (``fpa.registry``); the trainer never
changes. Every list of method names (config schema enum, docs, ``fpa methods``) is derived from
``OBJECTIVES``.
"""

from __future__ import annotations

from fpa.objectives.base import Objective, SequenceStats
from fpa.registry import Registry

OBJECTIVES = Registry("objective", __name__, "OBJECTIVES")
get_objective = OBJECTIVES.lookup
#: The module that defines objective ``name`` (for code fingerprints).
module_of = OBJECTIVES.module_of

__all__ = ["OBJECTIVES", "Objective", "SequenceStats", "get_objective", "module_of"]
