"""One judge, fuzzed (issue 34): configs generated from the schema and mutated (types, keys, depth,
unicode, huge numbers, duplicate and non-string keys, empty and absent parts, alias bombs; names that
collide or break later, issue 52) are accepted by both ``fpa check-config`` and planning, or refused by
both with the same single line, in time and without a traceback; what is accepted plans and runs its
first job. A fixed budget (the judges and generators: ``tests/hostile_input/``; the last larger run:
docs/archive/benchmarks.md)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from hostile_input import config_examples, fuzz_config, name_examples

#: examples per CI run (derandomized: the same ones each run), and real ``snakemake -n`` runs
EXAMPLES, SNAKEMAKE_RUNS = 100, 2
KEPT: list[tuple[str, fuzz_config.Verdict]] = []
# the later tests read what the fuzz test KEPT: one worker under pytest-xdist
pytestmark = pytest.mark.xdist_group("fuzz_config")


#: the same examples each run, judged without hypothesis's own checks of their time and database
FIXED = dict(derandomize=True, deadline=None, database=None, phases=fuzz_config.PHASES,
             suppress_health_check=list(HealthCheck))


def _judged(example) -> tuple[str, fuzz_config.Verdict, fuzz_config.Verdict]:
    """The example's text and its two verdicts, which agree (``fuzz_config.judge_example``)."""
    config, edits, _ = example
    with tempfile.TemporaryDirectory() as directory:
        path, check, planned = fuzz_config.judge_example(config, edits, Path(directory))
        return path.read_text(), check, planned


@settings(max_examples=EXAMPLES, **FIXED)
@given(config_examples.configs())
def test_check_config_and_planning_agree_on_every_generated_config(example):
    text, check, planned = _judged(example)
    if not planned.line.startswith("snakemake: "):
        KEPT.append((text, check))


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


#: examples of the name classes alone (name_examples.NAME_CLASSES), each the default config plus one
NAME_EXAMPLES = 60
NAMES_KEPT: list[tuple[str, fuzz_config.Verdict, str]] = []


@settings(max_examples=NAME_EXAMPLES, **FIXED)
@given(config_examples.name_configs())
def test_check_config_and_planning_agree_on_every_name_class(example):
    text, check, _ = _judged(example)
    NAMES_KEPT.append((text, check, example[2][0]))


def test_what_check_config_accepts_of_the_name_classes_plans_and_runs_its_first_job(tmp_path):
    if len(NAMES_KEPT) < NAME_EXAMPLES // 2:
        pytest.skip("runs after the name fuzz test (-k selected it alone)")
    refused = {kind for _, check, kind in NAMES_KEPT if not check.accepted}
    assert refused == {f"names_{kind}" for kind in name_examples.NAME_CLASSES}, "each class reaches a refusal"
    # the longest names accepted: every planned path fits beside its record's temporary, the first job runs
    text = next(text for text, check, kind in NAMES_KEPT if check.accepted and kind == "names_limit")
    path = tmp_path / "config.yaml"
    path.write_text(text)
    assert fuzz_config.run_first_job(path, tmp_path / "work")
    assert fuzz_config.real_snakemake_checks([(text, check) for text, check, _ in NAMES_KEPT], 2) == []
