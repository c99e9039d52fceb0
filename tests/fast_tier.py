"""The fast tier's guard (a pytest plugin, loaded by tests/conftest.py): a test not marked
``slow`` runs in the fast tier (``python -m pytest -m "not slow"``), so it must stay cheap.

Each such test is charged the CPU seconds of this process and its finished subprocesses from
the start of its setup to the end of its call (fixtures it builds first included), and fails
when it spends more than ``fast_tier_cpu_seconds`` (pyproject.toml) or its own
``@pytest.mark.cpu_budget(seconds)``. CPU time, not wall time: it grows far less when other
work shares the machine (not nothing: switching between processes costs some). As the full suite
runs these tests too, a slow test cannot slip into the fast tier unnoticed, whichever tier
runs it. Under pytest-xdist each worker guards its own tests and sends each one's CPU seconds
with its report (``user_properties``), from which the summary is drawn.
"""

from __future__ import annotations

import resource
import time

import pytest

_STARTED = pytest.StashKey[float]()
CPU_PROPERTY = "fast_tier_cpu_seconds"  # the user_properties key of a budgeted test's report


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) and of its waited-for children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_addoption(parser):
    parser.addini("fast_tier_cpu_seconds", "CPU seconds a test not marked slow may spend (setup + call); "
                                           "unset: no budget")


def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_budget(seconds): CPU seconds this fast-tier test may spend, "
                                       "instead of fast_tier_cpu_seconds")


def budget(item) -> float | None:
    """The CPU seconds ``item`` may spend; None for a slow test, or where no budget is set."""
    if item.get_closest_marker("slow"):
        return None
    marker = item.get_closest_marker("cpu_budget")
    default = item.config.getini("fast_tier_cpu_seconds")
    return float(marker.args[0]) if marker else float(default) if default else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_STARTED] = cpu_seconds()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when != "call" or _STARTED not in item.stash:
        return
    spent = cpu_seconds() - item.stash[_STARTED]
    allowed = budget(item)
    if allowed is not None:
        report.user_properties.append((CPU_PROPERTY, spent))
    if allowed is not None and report.passed and spent > allowed:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} spent {spent:.1f} CPU s, over the fast tier's {allowed:g} "
                           f"(fast_tier_cpu_seconds in pyproject.toml, or its cpu_budget mark): "
                           f"make it cheaper, or mark it slow and say what it catches in docs/testing.md")


def pytest_terminal_summary(terminalreporter, config):
    """The fast-tier tests' CPU seconds: their total and the costliest, to see the headroom."""
    spent = sorted(((value, report.nodeid) for reports in terminalreporter.stats.values() for report in reports
                    if getattr(report, "when", None) == "call"
                    for key, value in getattr(report, "user_properties", ()) if key == CPU_PROPERTY), reverse=True)
    if spent:
        total = sum(seconds for seconds, _ in spent)
        terminalreporter.section("fast tier CPU time")
        terminalreporter.write_line(f"{len(spent)} tests not marked slow: {total:.0f} CPU s; the costliest:")
        for seconds, nodeid in spent[:5]:
            terminalreporter.write_line(f"{seconds:8.1f} CPU s  {nodeid}")
