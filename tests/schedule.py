"""How the tests share pytest-xdist's workers (the tiers run ``-n 2 --dist loadgroup``; a pytest
plugin, loaded by tests/conftest.py). Public pytest and pytest-xdist interfaces only.

- Slow tests are collected first, then those with a CPU budget of their own, then the rest (a
  stable sort): the longest runs start at once while the short tests fill the other worker,
  instead of one worker finishing alone on a long test collected last.
- Tests marked with xdist's ``@pytest.mark.xdist_group(name)`` run on one worker: the slow tests
  of a module that share a module- or class-scoped fixture (the rehearsal's run, the CI DAG:
  minutes), which that worker builds once (spread over two, each would build it), and a fast
  module's tests that share state (an engine worth starting once). A fast module's other shared
  fixtures cost seconds, and its tests go to whichever worker is free.
  xdist's ``loadgroup`` scheduler groups tests whose ids end in ``@group``; pytest-xdist 3.8.0's
  workers add that suffix by setting ``item._nodeid``, which pytest 9.2 no longer reads
  (pytest-xdist#1386), so the mark alone groups nothing. Here each worker writes its tests'
  groups to a file beside the run's lock, and the controller's scheduler (xdist's
  ``pytest_xdist_make_scheduler`` hook) adds the suffixes to the ids it schedules.
- A test marked ``alone`` (one that measures the host, such as its shared memory) runs while no
  other test does: each test holds a lock shared by all workers, shared for most, exclusive for
  those; a waiting exclusive test stops the other worker from starting its next one.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile

import pytest

LOCK_VARIABLE = "FPA_TESTS_ALONE_LOCK"  # the lock files' prefix, set by the controller, read by its workers
GROUPS_SUFFIX = ".groups.json"  # beside the lock: {test id: group} as the workers collected them
_LOCKS = pytest.StashKey[tuple]()


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
    """The worker group of ``item``: the names of its ``xdist_group`` marks joined (as xdist joins
    them), or None (any worker)."""
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")})
    return "_".join(names) or None


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None,
                                 item.get_closest_marker("cpu_budget") is None))
    if hasattr(config, "workerinput"):  # an xdist worker: the groups for the controller's scheduler
        groups = {item.nodeid: name for item in items if (name := group(item)) is not None}
        path = os.environ[LOCK_VARIABLE] + GROUPS_SUFFIX
        partial = f"{path}.{config.workerinput['workerid']}"  # every worker writes the same groups: one file whole
        with open(partial, "w") as handle:
            json.dump(groups, handle)
        os.replace(partial, path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class MarkedGroupScheduling(LoadGroupScheduling):
        """xdist's loadgroup scheduling of the ids the workers collected, each with its group's suffix."""

        def add_node_collection(self, node, collection):
            with open(os.environ[LOCK_VARIABLE] + GROUPS_SUFFIX) as handle:
                groups = json.load(handle)
            super().add_node_collection(node, [f"{test}@{groups[test]}" if test in groups else test
                                               for test in collection])

    return MarkedGroupScheduling(config, log)


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
