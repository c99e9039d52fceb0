"""The benchmark tables in README.md, the benchmarks' READMEs and docs/ are what
benchmarks/shared/report.py writes from the committed results files: no number in them is typed by hand."""

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from shared import report  # noqa: E402


@pytest.mark.parametrize("doc", report.DOCS, ids=lambda doc: str(doc.relative_to(report.ROOT)))
def test_every_section_is_its_results_file(doc):
    text = doc.read_text()
    assert report.SECTION.search(text), f"{doc}: no bench section"
    regenerated = report.regenerate(text, str(doc))
    assert regenerated == text, (f"{doc}: stale sections {report.stale_sections(text, regenerated)}; "
                                 "run python benchmarks/shared/report.py")


def test_a_number_typed_into_a_section_is_caught_and_replaced():
    text = report.DOCS[0].read_text()
    section = report.SECTION.search(text)
    body = section["body"]
    digit = re.search(r"\d", body)
    typed = body[:digit.start()] + str((int(digit[0]) + 1) % 10) + body[digit.end():]
    edited = text[:section.start("body")] + typed + text[section.end("body"):]
    assert report.stale_sections(edited, report.regenerate(edited, "README.md")) == [section["name"]]
    assert report.regenerate(edited, "README.md") == text


def test_an_unclosed_section_names_its_line():
    with pytest.raises(ValueError, match=r"doc\.md:3: bench:plan:start has no matching"):
        report.regenerate("a\nb\n<!-- bench:plan:start -->\nc\n", "doc.md")


def test_a_section_without_a_benchmark_names_what_is_missing():
    with pytest.raises(ValueError, match=r"bench:nothing_here: expected one results file benchmarks/<folder>/results/nothing_here\.json, found none"):
        report.regenerate("<!-- bench:nothing_here:start -->\n<!-- bench:nothing_here:end -->\n", "doc.md")


def test_a_record_name_in_two_folders_is_refused_naming_both(tmp_path, monkeypatch):
    for folder in ("training", "memory"):
        (tmp_path / "benchmarks" / folder / "results").mkdir(parents=True)
        (tmp_path / "benchmarks" / folder / "results" / "twice.json").write_text("{}")
    monkeypatch.setattr(report, "ROOT", tmp_path)
    monkeypatch.setattr(report, "BENCH", tmp_path / "benchmarks")
    with pytest.raises(ValueError, match=r"bench:twice: expected one results file .*found "
                                         r"\['benchmarks/memory/results/twice.json', 'benchmarks/training/results/twice.json'\]"):
        report.regenerate("<!-- bench:twice:start -->\n<!-- bench:twice:end -->\n", "doc.md")


@pytest.mark.parametrize("name, legacy", [("trl_step", ("cpu_count",)), ("code_rounds", ("cpus",)),
                                          ("plan", ("machine", "cpus")), ("memory_plan", ())])
def test_a_record_written_now_names_its_cpu_in_its_table(name, legacy):
    """Records now carry ``cpu`` (``shared.checkouts.machine``) in place of a bare core count: the committed
    record, reshaped so, renders with its CPU named."""
    import copy
    import json

    path = report.results_file(name, "test")
    record = copy.deepcopy(json.loads(path.read_text()))
    if legacy:
        *parents, key = legacy
        holder = record
        for parent in parents:
            holder = holder[parent]
        holder.pop(key, None)
    record["cpu"] = {"vendor": "GenuineIntel", "model": "Test CPU Model", "cores": 7}
    text = report.benchmark_module(path, record, "test").markdown(record)
    assert "7 cores of an Test CPU Model" in text
