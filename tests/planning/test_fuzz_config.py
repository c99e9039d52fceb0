"""One judge, fuzzed (issue 34): configs generated from the schema and mutated (types, keys, depth,
unicode, huge numbers, duplicate and non-string keys, empty and absent parts, alias bombs) are accepted
by both ``fpa check-config`` and planning, or refused by both with the same single line, in time and
without a traceback. A fixed budget here; ``benchmarks/hostile_input/fuzz_config.py`` runs a larger one."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from hostile_input import config_examples, fuzz_config  # noqa: E402

#: examples per CI run (derandomized: the same ones each run), and real ``snakemake -n`` runs
EXAMPLES, SNAKEMAKE_RUNS = 100, 2
KEPT: list[tuple[str, fuzz_config.Verdict]] = []
# the later tests read what the fuzz test KEPT: one worker under pytest-xdist
pytestmark = pytest.mark.xdist_group("fuzz_config")


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, phases=fuzz_config.PHASES,
          suppress_health_check=list(HealthCheck))
@given(config_examples.configs())
def test_check_config_and_planning_agree_on_every_generated_config(example):
    config, edits, _ = example
    with tempfile.TemporaryDirectory() as directory:
        path, check, planned = fuzz_config.judge_example(config, edits, Path(directory))
        if not planned.line.startswith("snakemake: "):
            KEPT.append((path.read_text(), check))


def test_the_fuzz_judged_refused_and_accepted_configs():
    if len(KEPT) < EXAMPLES // 2:
        pytest.skip("runs after the fuzz test (-k selected it alone)")
    accepted = sum(check.accepted for _, check in KEPT)
    assert 0 < accepted < len(KEPT), "the generator reaches both verdicts"


def test_real_snakemake_dry_runs_agree_with_check_config():
    if not KEPT:
        pytest.skip("runs after the fuzz test (-k selected it alone)")
    assert fuzz_config.real_snakemake_checks(KEPT, SNAKEMAKE_RUNS) == []


@pytest.mark.parametrize("edit", ["alias_bomb", "duplicate"])
def test_text_edits_are_refused_by_both(tmp_path, edit):
    path, check, planned = fuzz_config.judge_example(config_examples.BASE, [edit], tmp_path)
    assert not check.accepted and check == planned
