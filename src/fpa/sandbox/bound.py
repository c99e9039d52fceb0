"""Which mechanism bounds one run's total memory and processes here, found by trying each.

In order of preference (``BOUNDS``): a cgroup v2 child (``fpa.sandbox.cgroup``), a cgroup
v1 child in the memory and pids hierarchies, and the polling ``watchdog``
(``fpa.sandbox.watchdog``), which works wherever /proc does. ``Sandbox(aggregate=...)``
forces one; ``fpa.sandbox.check.aggregate_report`` prints what each would do here.
"""

from __future__ import annotations

import functools
from typing import Callable, Union

from fpa.sandbox import cgroup, watchdog

Bound = Union[cgroup.CgroupBound, watchdog.WatchdogBound]
BOUNDS: dict[str, Callable[[], Bound]] = {
    "cgroup2": lambda: cgroup.CgroupBound(cgroup.V2),
    "cgroup1": lambda: cgroup.CgroupBound(cgroup.V1),
    "watchdog": watchdog.WatchdogBound,
}


@functools.lru_cache(maxsize=None)
def probe(name: str) -> Bound | str:
    """The mechanism ``name`` set up here, or why it cannot be (one line); cached per process."""
    if name not in BOUNDS:
        raise ValueError(f"Sandbox.aggregate: expected one of {list(BOUNDS)}, got {name!r}")
    try:
        return BOUNDS[name]()
    except OSError as err:
        return str(err)


def choose(name: str | None = None) -> Bound:
    """``name``'s mechanism (``OSError`` with the reason if it does not work here), else the first that works."""
    for candidate in [name] if name else BOUNDS:
        found = probe(candidate)
        if not isinstance(found, str):
            return found
    raise OSError(f"aggregate bound {name!r} does not work here: {found}" if name else
                  f"no aggregate bound works here (the last tried, {candidate}: {found})")


def memory_bound() -> str:
    """The name of the mechanism a default ``Sandbox`` uses here (recorded with results)."""
    return choose().name
