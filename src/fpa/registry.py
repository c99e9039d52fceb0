"""How every family of named parts is registered: objectives, online methods, figures and graders.

A family's registry names its member modules, once, in one place (``Registry(..., modules=...)``);
each member module declares its records in a module-level tuple named as the family's registry
(``OBJECTIVES``, ``ONLINE_METHODS``, ``FIGURES``, ``GRADERS``), each record carrying its ``name``.
Every list of a family's names (a schema enum, ``fpa methods``, an error's choices) is read from the
registry. A module of the family's package that no registry names is no member, whatever it holds;
tests/test_registries.py finds a record declared in a module the registry does not name.

The members are imported by name on first use, not when the registry is, so a code fingerprint
(``fpa.provenance.fingerprint``, which follows static imports only) of a job that names one member
does not change with another's source, and the graders' harnesses are not imported by the
modules that only name the registry.
"""

from __future__ import annotations

import importlib
from typing import Iterator, Mapping, Sequence


class Registry(Mapping):
    """``name -> record`` of one family, in the order of its modules and of each module's tuple.

    ``family``: what a member is, for errors ("objective"); ``package``: the package of the member
    modules; ``modules``: their names in it; ``attribute``: the tuple each declares.
    """

    def __init__(self, family: str, package: str, modules: Sequence[str], attribute: str):
        self.family, self.package, self.modules, self.attribute = family, package, tuple(modules), attribute
        self._records: dict[str, object] | None = None
        self._module_of: dict[str, str] = {}

    def _loaded(self) -> dict[str, object]:
        if self._records is None:  # two threads' first uses both load: the same records
            records, module_of = {}, {}
            for module_name in self.modules:
                module = f"{self.package}.{module_name}"
                for record in getattr(importlib.import_module(module), self.attribute):
                    if record.name in records:
                        raise ValueError(f"{self.family} {record.name!r}: registered by {module_of[record.name]} "
                                         f"and by {module}")
                    records[record.name], module_of[record.name] = record, module
            self._module_of, self._records = module_of, records
        return self._records

    def __getitem__(self, name: str):
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def lookup(self, name: str):
        """The record of ``name``; a ``ValueError`` listing the registered names otherwise."""
        records = self._loaded()
        if name not in records:
            raise ValueError(f"unknown {self.family} {name!r}; expected one of {sorted(records)}")
        return records[name]

    def module_of(self, name: str) -> str:
        """The module that registers ``name`` (for code fingerprints)."""
        self.lookup(name)
        return self._module_of[name]

