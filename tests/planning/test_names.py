"""Names that cannot collide or break later (issue 52): every run name is made once, whatever made it;
every name fits the file system with what the project adds to it, is no provenance record or temporary
of another file, and no periodic wildcard value Snakemake refuses; paths Snakemake reads hold no brace;
a table's rows and columns read apart. Each is refused by the judge in one line, by ``fpa check-config``
and ``snakemake -n`` alike."""

from __future__ import annotations

import copy
import errno
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fpa.errors import ConfigError
from fpa.figures import FIGURES
from fpa.io import atomic_path, is_temporary_name, longest_temporary_name
from fpa.planning import judge
from fpa.planning.validation import EXPERIMENT
from fpa.config.wildcards import NAME_MAX, components, longest_name, name_limit, path_affixes, periodic_unit

from hostile_input import fuzz_config
from hostile_input.name_examples import NAME_PLACES, add_name, filler_name

ROOT = Path(__file__).resolve().parents[2]

BASE = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
#: the wildcards whose values the config chooses (its names, and its catalog's file paths)
CHOSEN = {*NAME_PLACES.values(), "path"}


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return path


def _refusal(tmp_path: Path, config: dict) -> str:
    path = _write(tmp_path, config)
    with pytest.raises(ConfigError) as info:
        judge([path])
    return str(info.value).replace(str(path), "config.yaml")


def _with(section: str, name: str) -> dict:
    return add_name(copy.deepcopy(BASE), section, name)


# --- one run name, one maker -----------------------------------------------------------------------
def _swept(where: str) -> dict:
    """``fpa`` swept over λ = 2 (at ``where``: the method or the model) beside a method ``fpa_lam2`` (λ = 5)."""
    config = copy.deepcopy(BASE)
    config["methods"]["fpa_lam2"] = {"objective": "fpa", "label": "FPA λ=5", "params": {"lam": 5.0}}
    if where == "method":
        config["methods"]["fpa"]["sweep"] = {"lam": [2]}
    else:
        config["models"]["toy"]["sweep"] = {"fpa": {"lam": [2]}}
    return config


def test_a_method_and_a_sweep_point_that_make_one_run_name_are_refused(tmp_path):
    assert _refusal(tmp_path, _swept("method")) == (
        "config.yaml: methods.fpa.sweep lam=2 and methods.fpa_lam2 both make the run 'fpa_lam2'; expected one "
        "method or sweep point per run name (rename the method)")
    assert _refusal(tmp_path, _swept("model")) == (
        "config.yaml: models.toy.sweep.fpa lam=2 and methods.fpa_lam2 both make the run 'fpa_lam2'; expected one "
        "method or sweep point per run name (rename the method)")


def test_one_sweep_point_on_several_models_makes_one_run(tmp_path):
    config = _with("models", "toy2")
    for model in config["models"].values():
        model["sweep"] = {"fpa": {"lam": [2]}}
    plan = judge([_write(tmp_path, config)])
    assert sorted(name for _, name in plan.runs) == ["fpa_lam2", "fpa_lam2", "offrl", "offrl"]


@pytest.mark.parametrize("table", ["cost_by_stage", "reproduction"])
def test_a_table_named_as_one_the_workflow_makes_itself_is_refused(tmp_path, table):
    assert _refusal(tmp_path, _with("tables", table)) == (
        f"config.yaml: tables.{table}: the name of a table the workflow makes itself (cost_by_stage, reproduction); "
        "expected another name")


# --- the file system, the project's own names, Snakemake's wildcards -------------------------------
def test_the_affixes_are_the_rules_path_templates():
    affixes = path_affixes()
    assert ("", ".jsonl") in affixes["bench"] and ("", ".json") in affixes["bench"]  # records, evaluations
    assert ("", ".tex") in affixes["table"] and affixes["method"] == {("", "")}
    # every wildcard of the rules' paths is one the config chooses, a registry's figure or a seed
    assert set(affixes) == CHOSEN | {"figure", "seed"}
    assert all(name_limit("figure") >= len(figure) for figure in FIGURES)


@pytest.mark.parametrize("wildcard", sorted(CHOSEN))
def test_a_name_at_its_limit_fits_the_file_system_and_one_byte_more_does_not(tmp_path, wildcard):
    """What the judge lets through is what the file system holds: the longest name the project gives a
    file beside a name's longest component (its record's temporary) is exactly NAME_MAX bytes."""
    for size, fits in ((name_limit(wildcard), True), (name_limit(wildcard) + 1, False)):
        longest = max(components(filler_name(size), wildcard), key=lambda made: len(longest_name(made)))
        file = tmp_path / longest_name(longest)
        if fits:
            file.write_text("")
            file.unlink()
        else:
            with pytest.raises(OSError) as info:
                file.write_text("")
            assert info.value.errno == errno.ENAMETOOLONG


def test_the_longest_temporary_name_bounds_a_real_one(tmp_path):
    with atomic_path(tmp_path / "out.json") as tmp:  # the output's own name, in the temporary's directory
        holder = tmp.parent
        assert is_temporary_name(holder.name)
        assert max(len(holder.name), *(len(entry.name) for entry in holder.iterdir())) <= len(
            longest_temporary_name("out.json"))
        assert holder.name.endswith(".tmp") and longest_temporary_name("out.json").startswith(".out.json.")


@pytest.mark.parametrize("section, suffix", [("methods", ""), ("models", ".jsonl"), ("benchmarks", ".jsonl"),
                                             ("tables", ".html"), (EXPERIMENT, "")])
def test_a_name_past_its_limit_is_refused_at_its_key(tmp_path, section, suffix):
    wildcard = NAME_PLACES[section]
    limit = name_limit(wildcard)
    name = filler_name(limit + 1)
    key = section if section == EXPERIMENT else f"{section}.{name}"
    run = ": run name" if section == "methods" else ""
    shown = f"{name[:24]!r}...{name[-24:]!r} ({limit + 1} bytes)"
    made = f"{name[:24]!r}...{(name + suffix)[-24:]!r} ({limit + 1 + len(suffix)} bytes)"
    assert _refusal(tmp_path, _with(section, name)) == (
        f"config.yaml: {key}{run}: {shown} makes a path component of 256 bytes, a temporary of the provenance "
        f"record of {made}; expected at most 255 bytes a component (a name of at most {limit} bytes)")
    judge([_write(tmp_path, _with(section, filler_name(limit)))])  # at the limit: planned


@pytest.mark.parametrize("section, name, component", [
    ("benchmarks", "toy8.json.prov", "toy8.json.prov.json"),  # its evaluation: another one's record
    ("tables", "main.prov", "main.prov.json"),  # its JSON: the record of a file main the clean-up finds gone
    ("methods", "fpa.prov.json", "fpa.prov.json")])  # a run's directory
def test_a_name_that_makes_a_provenance_record_s_name_is_refused(tmp_path, section, name, component):
    run = ": run name" if section == "methods" else ""
    assert _refusal(tmp_path, _with(section, name)) == (
        f"config.yaml: {section}.{name}{run}: {name!r} makes the path component {component!r}, named as the "
        "provenance record of another file; expected a name whose files do not end in '.prov.json'")


def test_a_model_named_like_a_record_of_none_of_its_files_is_planned(tmp_path):
    judge([_write(tmp_path, _with("models", "toy.prov"))])  # toy.prov, toy.prov.jsonl, ...: no record's name


@settings(max_examples=300, derandomize=True, deadline=None, database=None)
@given(st.one_of(st.text("ab", max_size=90), st.text("abc1_", max_size=60),
                 st.tuples(st.text("abc", max_size=8), st.text("ab", min_size=1, max_size=4), st.integers(15, 25))
                 .map(lambda parts: parts[0] + parts[1] * parts[2])))
def test_periodic_names_are_exactly_those_snakemake_refuses(value):
    from snakemake.io import PeriodicityDetector

    assert (periodic_unit(value) is not None) == (PeriodicityDetector().is_periodic(value) is not None)


@pytest.mark.parametrize("section", ["methods", "models", "benchmarks", "tables", EXPERIMENT])
def test_a_periodic_name_is_refused_and_one_repeat_fewer_planned(tmp_path, section):
    name = "x1" + "ab" * 20
    key = section if section == EXPERIMENT else f"{section}.{name}"
    run = ": run name" if section == "methods" else ""
    assert _refusal(tmp_path, _with(section, name)) == (
        f"config.yaml: {key}{run}: {name!r} ends in 'ab' repeated 20 times, which Snakemake refuses as a periodic "
        "wildcard value (20 repeats or more); expected a name without such a repeat")
    judge([_write(tmp_path, _with(section, "x1" + "ab" * 19))])


def _catalog_config(tmp_path: Path, path: str) -> dict:
    """The default config with a benchmark of a catalog whose one file is ``path``."""
    entry = {"path": path, "sha256": "0" * 64, "url": "https://example.invalid/x", "upstream_format": "jsonl",
             "loader": "gsm8k", "records": 20}
    (tmp_path / "catalog.yaml").write_text(yaml.safe_dump({"benchmarks": {"gsm8k": entry}}))
    config = _with("benchmarks", "gsm8k")
    config["benchmarks"]["gsm8k"] = {"source": "catalog", "parts": ["gsm8k"], "grader": "math"}
    return {**config, "data": {"catalog": str(tmp_path / "catalog.yaml")}}


@pytest.mark.parametrize("path, problem", [
    ("gsm8k/{split}.jsonl", "expected a path without braces (Snakemake reads {...} in a job's input as a "
                            "wildcard), got 'gsm8k/{split}.jsonl'"),
    ("gsm8k/test" + "ab" * 20, "'gsm8k/test" + "ab" * 20 + "' ends in 'ab' repeated 20 times, which Snakemake "
                               "refuses as a periodic wildcard value (20 repeats or more); expected a name without "
                               "such a repeat"),
    ("gsm8k/.test.jsonl.1-vm.abcd1234.tmp", "'gsm8k/.test.jsonl.1-vm.abcd1234.tmp' makes the path component "
                                            "'.test.jsonl.1-vm.abcd1234.tmp', named as a temporary of an atomic "
                                            "write (removed once its writer is gone); expected another name")])
def test_a_catalog_path_snakemake_or_the_clean_up_would_misread_is_refused(tmp_path, path, problem):
    assert _refusal(tmp_path, _catalog_config(tmp_path, path)) == (
        f"{tmp_path}/catalog.yaml: benchmarks.gsm8k.path: {problem}")


def test_a_benchmark_file_path_with_braces_is_refused(tmp_path):
    config = _with("benchmarks", "mine")
    config["benchmarks"]["mine"] = {"source": "file", "path": str(tmp_path / "b{x}.jsonl"), "grader": "math"}
    assert _refusal(tmp_path, config) == (
        f"config.yaml: benchmarks.mine.path: expected a path without braces (Snakemake reads {{...}} in a job's "
        f"input as a wildcard), got '{tmp_path}/b{{x}}.jsonl'")


# --- rows and columns a reader tells apart ----------------------------------------------------------
def test_two_rows_of_a_block_with_one_label_are_refused(tmp_path):
    config = copy.deepcopy(BASE)
    config["methods"]["offrl"]["label"] = "FPA"
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy: rows 'offrl' and 'fpa' are both labelled 'FPA'; expected a distinct label per "
        "row of a block (methods.<m>.label, a label in rows, or group_by: sweep)")


def test_two_sweeps_read_apart_in_blocks_of_their_own(tmp_path):
    config = copy.deepcopy(BASE)
    config["methods"]["offrl"]["sweep"] = {"lr": [1.0e-4]}
    config["methods"]["fpa"]["sweep"] = {"lr": [1.0e-4]}
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy: rows 'offrl_lr0.0001' and 'fpa_lr0.0001' are both labelled 'η = 0.0001'; expected "
        "a distinct label per row of a block (methods.<m>.label, a label in rows, or group_by: sweep)")
    config["tables"]["toy"] = {"columns": config["tables"]["toy"], "group_by": "sweep"}
    judge([_write(tmp_path, config)])


@pytest.mark.parametrize("spec, listed", [
    ({"columns": ["toy8"], "rows": ["fpa", {"run": "fpa", "label": "FPA again"}]}, "the row 'fpa'"),
    (["toy8", "toy9", "toy8"], "the column 'toy8'")])
def test_a_row_or_column_listed_twice_is_refused(tmp_path, spec, listed):
    config = copy.deepcopy(BASE)
    config["tables"]["toy"] = spec
    what = listed.split()[1]
    assert _refusal(tmp_path, config) == (
        f"config.yaml: tables.toy: {listed} is listed twice; expected each {what} once")


def test_a_column_headed_as_another_is_refused(tmp_path):
    config = copy.deepcopy(BASE)
    config["benchmarks"]["toy9"]["label"] = "Avg."
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy: columns 'toy9' and 'avg' are both headed 'Avg.'; expected a distinct header per "
        "column (benchmarks.<b>.label, or column_labels)")


@pytest.mark.parametrize("offrl, fpa, shown", [
    ("FPA-\u00e9", "FPA-e\u0301", "'FPA-\\xe9' and 'FPA-e\\u0301'"),  # NFC and NFD
    ("F\u200bPA", "FPA", "'F\\u200bPA' and 'FPA'"),  # a zero-width space
    ("\uff26\uff30\uff21", "FPA", "'\\uff26\\uff30\\uff21' and 'FPA'"),  # full-width letters (NFKC)
    ("Off-RL\n", "off-rl", "'Off-RL\\n' and 'off-rl'"),  # a line break, and case
])
def test_two_rows_a_reader_cannot_tell_apart_are_refused_naming_both(tmp_path, offrl, fpa, shown):
    config = copy.deepcopy(BASE)
    config["methods"]["offrl"]["label"], config["methods"]["fpa"]["label"] = offrl, fpa
    assert _refusal(tmp_path, config) == (
        f"config.yaml: tables.toy: rows 'offrl' and 'fpa' are labelled {shown}, which read alike (same text once "
        "Unicode-normalised (NFKC), case-folded, invisible characters removed); expected a distinct label per row "
        "of a block (methods.<m>.label, a label in rows, or group_by: sweep)")


def test_two_columns_a_reader_cannot_tell_apart_are_refused(tmp_path):
    config = copy.deepcopy(BASE)
    config["tables"]["toy"] = {"columns": ["toy8", "toy9", "toy10"], "column_labels": {"toy8": "T\u00ad8",
                                                                                        "toy9": "t8"}}
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy: columns 'toy8' and 'toy9' are headed 'T\\xad8' and 't8', which read alike (same "
        "text once Unicode-normalised (NFKC), case-folded, invisible characters removed); expected a distinct header "
        "per column (benchmarks.<b>.label, or column_labels)")


def test_a_label_that_reads_as_another_rows_or_columns_key_is_refused(tmp_path):
    config = copy.deepcopy(BASE)
    config["methods"]["offrl"]["label"], config["methods"]["fpa"]["label"] = "fpa", "Ours"
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy: the row 'offrl' is labelled 'fpa', which reads as the row 'fpa'; expected a label "
        "that names no other row (fpa explain takes either)")
    config = copy.deepcopy(BASE)
    config["tables"]["toy"] = {"columns": ["toy8", "toy9"], "column_labels": {"toy8": "Eight", "toy9": "TOY8"}}
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy: the column 'toy9' is headed 'TOY8', which reads as the column 'toy8'; expected a "
        "label that names no other column (fpa explain takes either)")


def test_an_unknown_column_labels_key_is_refused_as_an_unknown_highlight_is(tmp_path):
    config = copy.deepcopy(BASE)
    config["tables"]["toy"] = {"columns": ["toy8", "toy9", "toy10"], "column_labels": {"toy99": "X"}}
    assert _refusal(tmp_path, config) == (
        "config.yaml: tables.toy.column_labels: 'toy99' is not a column of the table; expected one of "
        "['toy8', 'toy9', 'toy10']")
    config["tables"]["toy"] = {"columns": ["toy8"], "highlight": ["fpx"]}
    assert _refusal(tmp_path, config).startswith("config.yaml: tables.toy.highlight: 'fpx' is not a row of the table")


# --- check-config and snakemake -n refuse alike ------------------------------------------------------
CLASSES = {
    "one run name, two makers": lambda tmp_path: _swept("method"),
    "a record's name": lambda tmp_path: _with("benchmarks", "toy8.json.prov"),
    "past the limit": lambda tmp_path: _with("methods", filler_name(300)),
    "periodic": lambda tmp_path: _with("methods", "x1" + "ab" * 20),
    "braces": lambda tmp_path: _catalog_config(tmp_path, "gsm8k/{split}.jsonl"),
    "one label": lambda tmp_path: {**BASE, "methods": {**BASE["methods"], "offrl": {"objective": "offrl",
                                                                                    "label": "FPA"}}},
    "look-alike labels": lambda tmp_path: {**BASE, "methods": {**BASE["methods"], "offrl": {
        "objective": "offrl", "label": "F\u200bPA"}}},
    "a label as another row's key": lambda tmp_path: {**BASE, "methods": {
        "offrl": {"objective": "offrl", "label": "fpa"}, "fpa": {"objective": "fpa", "label": "Ours"}}},
}


@pytest.mark.parametrize("case", sorted(CLASSES))
def test_check_config_and_snakemake_dry_run_refuse_with_one_line(tmp_path, case):
    path = _write(tmp_path, CLASSES[case](tmp_path))
    check = fuzz_config.check_config_verdict(path)
    planned = fuzz_config.snakemake_verdict(path, tmp_path / "work")
    assert not check.accepted and check == planned, (check, planned)
    assert not (tmp_path / "work" / "results").exists()


def test_a_benchmark_named_at_its_limit_plans_and_its_first_job_runs(tmp_path):
    name = filler_name(name_limit("bench"))
    path = _write(tmp_path, _with("benchmarks", name))
    assert fuzz_config.check_config_verdict(path).accepted
    outputs = fuzz_config.run_first_job(path, tmp_path / "work", holding=name)
    assert outputs == [f"results/benchmarks/toy/{name}.jsonl"]
    record = tmp_path / "work" / (outputs[0] + ".prov.json")
    assert record.is_file() and len(longest_name(Path(outputs[0]).name).encode()) == NAME_MAX
    assert not [left for left in os.listdir(record.parent) if is_temporary_name(left)]
