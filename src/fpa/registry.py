"""How every family of named parts is registered: objectives, online methods, figures and graders.

A family's members are found, not listed: every module of the family's package (subpackages
included) that assigns the family's tuple at its top level (``OBJECTIVES = (...)``, ``ONLINE_METHODS``,
``FIGURES``, ``GRADERS``), each record carrying its ``name``; and every module that an installed
distribution names in the entry-point group of the family's package (``fpa.objectives``, ...), which
declares its tuple alike. Adding a member is adding its module (here or in the user's own package):
no list is edited, so no module that every job of the family imports changes with it. Every list of
a family's names (a schema enum, ``fpa methods``, an error's choices) is read from the registry.

The members are imported by name on first use, not when the registry is, so a code fingerprint
(``fpa.provenance.fingerprint``, which follows static imports only) of a job that names one member
does not change with another's source, and the graders' harnesses are not imported by the
modules that only name the registry.
"""

from __future__ import annotations

import importlib
import re
from importlib.metadata import entry_points
from pathlib import Path
from typing import Iterator, Mapping


class Registry(Mapping):
    """``name -> record`` of one family: the package's members in the order of their module names,
    then the entry points' in the order of theirs, each module's records in the order of its tuple.

    ``family``: what a member is, for errors ("objective"); ``package``: the package of the member
    modules, also the entry-point group of the members in other distributions; ``attribute``: the
    tuple each member module declares.
    """

    def __init__(self, family: str, package: str, attribute: str):
        self.family, self.package, self.attribute = family, package, attribute
        self._records: dict[str, object] | None = None
        self._module_of: dict[str, str] = {}

    def member_modules(self) -> list[str]:
        """The modules that declare the family's tuple: the package's, then the entry points'."""
        root = Path(importlib.import_module(self.package).__file__).parent
        declares = re.compile(rf"^{re.escape(self.attribute)}\s*(?::[^=\n]*)?=", re.M)
        found = [".".join((self.package, *path.relative_to(root).with_suffix("").parts))
                 for path in sorted(root.rglob("*.py"))
                 if path.name != "__init__.py" and declares.search(path.read_text(encoding="utf-8"))]
        plugins = sorted(entry_points(group=self.package), key=lambda point: point.name)
        return found + [point.module for point in plugins]

    def _loaded(self) -> dict[str, object]:
        if self._records is None:  # two threads' first uses both load: the same records
            records, module_of = {}, {}
            for module in self.member_modules():
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
