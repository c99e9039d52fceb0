"""How the tests share pytest-xdist's workers (the tiers run ``-n 2 --dist loadgroup``; a pytest
plugin, loaded by tests/conftest.py).

- Slow tests are collected first, then those with a CPU budget of their own, then the rest (a
  stable sort): the longest runs start at once while the short tests fill the other worker,
  instead of one worker finishing alone on a long test collected last.
- The slow tests of a module that share a module- or class-scoped fixture (the rehearsal's run,
  the CI DAG: minutes) go to one worker, which builds it once; spread over two, each would build
  it. A fast module's shared fixture costs seconds, and its tests spread to whichever worker is
  free pay more; a fast module whose tests must share a worker says so with xdist's own mark,
  ``@pytest.mark.xdist_group(name)`` (state its tests pass on, an engine worth starting once).
  This is xdist's ``loadgroup`` with the module's path as the group, given the way its
  ``xdist_group`` mark means: a suffix ``@group`` to the test's id. pytest-xdist 3.8.0 sets
  ``item._nodeid`` for that, which pytest 9.2 no longer reads (the id is ``item._id``), so the
  mark alone groups nothing.
- A test marked ``alone`` (one that measures the host, such as its shared memory) runs while no
  other test does: each test holds a lock shared by all workers, shared for most, exclusive for
  those; a waiting exclusive test stops the other worker from starting its next one.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile

import pytest
from _pytest.nodeid import NodeId

SHARED_SCOPES = ("module", "class")
LOCK_VARIABLE = "FPA_TESTS_ALONE_LOCK"  # the lock files' prefix, set by the controller, read by its workers
_LOCKS = pytest.StashKey[tuple]()


def shares_a_fixture(item) -> bool:
    """Whether ``item`` uses a fixture built once for its module or class."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(definitions[-1].scope in SHARED_SCOPES
                                    for definitions in info.name2fixturedefs.values() if definitions)


def pytest_configure(config):
    config.addinivalue_line("markers", "alone: runs while no other test runs (it measures the host)")
    created, inherited = None, os.environ.get(LOCK_VARIABLE)
    if not hasattr(config, "workerinput"):  # the controller, or a run without workers: a lock of its own
        created = tempfile.mkdtemp(prefix="fpa-tests-")
        os.environ[LOCK_VARIABLE] = os.path.join(created, "lock")  # its workers start with it
    prefix = os.environ[LOCK_VARIABLE]
    # the turnstile: an exclusive waiter holds it, so no new shared holder gets past it
    config.stash[_LOCKS] = (open(prefix + ".turnstile", "a"), open(prefix, "a"), created, inherited)


def pytest_unconfigure(config):
    turnstile, lock, created, inherited = config.stash[_LOCKS]
    turnstile.close()
    lock.close()
    if created:  # a run inside another (pytester) gives the outer run its variable back
        shutil.rmtree(created, ignore_errors=True)
        if inherited is None:
            os.environ.pop(LOCK_VARIABLE, None)
        else:
            os.environ[LOCK_VARIABLE] = inherited


def group(item) -> str | None:
    """The worker group of ``item``: its ``xdist_group`` mark's name, else its module's path for a slow
    test sharing a module fixture, else None (any worker)."""
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
    if item.get_closest_marker("slow") and shares_a_fixture(item):
        return item.nodeid.split("::")[0]
    return None


def pytest_collection_modifyitems(config, items):
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        for item in items:
            name = group(item)
            # "@" after the parameters: an xdist release that sets the id itself already grouped it
            if name is not None and "@" not in item.nodeid.rpartition("]")[2]:
                item._id = NodeId.parse(f"{item.nodeid}@{name}")
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None,
                                 item.get_closest_marker("cpu_budget") is None))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    turnstile, lock, _, _ = item.config.stash[_LOCKS]
    alone = item.get_closest_marker("alone") is not None
    fcntl.flock(turnstile, fcntl.LOCK_EX)
    if alone:
        fcntl.flock(lock, fcntl.LOCK_EX)
    else:
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_SH)
    try:
        yield
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        if alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
