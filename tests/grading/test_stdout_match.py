"""LiveCodeBench's stdout comparison (``fpa.grading.code.stdout_match``) gives LiveCodeBench's own verdict:
the issue's examples, then generated pairs of every class of ``stdout_pairs`` judged by nvidia-livecodebench's
``grade_stdio`` (a fixed budget here; a larger run's table is in docs/code_eval.md)."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import HealthCheck, given, settings

from fpa.grading.code.stdout_match import stdout_matches

from stdout_pairs import CLASSES, lcb_matches

EXAMPLES = 40  # per class, derandomized: the same pairs each run


# found, not imported: importing LiveCodeBench's evaluation package raises this process's int-string limit
pytestmark = pytest.mark.skipif(importlib.util.find_spec("livecodebench") is None,
                                reason="nvidia-livecodebench not installed (.ci/run installs it with --no-deps)")


@pytest.mark.parametrize("printed, expected, verdict", [
    ("10000000000000000000\n", "10000000000000000001\n", False),  # equal as floats (issue 52)
    ("2" * 400, "1" * 400, False),  # both inf as floats (issue 52)
    ("+" + "1" * 5000 + "\n", "1" * 5000, True),  # past Python's int-string limit
    ("1" * 4999 + "2", "1" * 5000, False),  # both inf as floats
    ("1.50 2\n", "1.5 2", True),
    ("1e5", "100000", True),
    ("-0", "0", True),
    ("+1", "1", True),
    ("١٢", "12", True),
    ("1.0000000000000001", "1", False),
    ("nan", "nan", True),  # the same text
    ("nan", "NaN", False),
    ("sNaN", "1", False),
    ("1\r2\n", "1\n2\n", False),  # split at "\n" only
    ("1\r\n2\r\n", "1\n2\n", True),
    ("1\n\n2", "1\n2", False),
    ("  1 \t 2  \n\n", "1 2", True),
    ("", "", True),
])
def test_the_issues_examples_get_lcbs_verdict(printed, expected, verdict):
    assert lcb_matches(printed, expected) is verdict
    assert stdout_matches(printed, expected) is verdict


@pytest.mark.parametrize("name", list(CLASSES))
def test_generated_pairs_get_lcbs_verdict(name):
    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(CLASSES[name])
    def check(pair):
        printed, expected = pair
        assert stdout_matches(printed, expected) is lcb_matches(printed, expected), pair

    check()
