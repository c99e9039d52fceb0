"""``fpa explain``: a changed file behind several evaluations is reported once, on stderr only; a
record is the record of the file it sits beside, found from any directory; an ambiguous row or
column, or a file that is no table, is refused in one line that says what to name."""

from __future__ import annotations

import os
import shutil

from fpa.cli import main
from fpa.io import sha256_path, write_json, write_text
from fpa.provenance.record import Job


def _table_over_one_model(tmp_path, seeds=(1, 2, 3)):
    """A table cell averaging one evaluation per seed, each of the same model file."""
    model = tmp_path / "model.txt"
    with Job("toy_base_model", {}, {}).output(model) as tmp:
        write_text(tmp, "weights")
    sources = []
    for seed in seeds:
        evaluation = tmp_path / f"eval-{seed}.json"
        with Job("evaluate", {"seed": seed}, {"model": model}).output(evaluation) as tmp:
            write_text(tmp, f'{{"pass_at_1": 0.{seed}}}')
        sources.append({"seed": seed, "value": seed / 10, "files": [str(evaluation)],
                        "sha256": {str(evaluation): sha256_path(evaluation)}})
    table = tmp_path / "table.csv"
    cells = {"fpa": {"toy8": {"text": "20.00 ± 10.00", "sources": sources}}}
    with Job("aggregate", {}, {}).output(table, cells=cells) as tmp:
        write_text(tmp, "Method,toy8\nfpa,20.00 ± 10.00\n")
    return table, model


def test_a_changed_file_behind_every_seed_is_one_problem(tmp_path, capsys):
    table, model = _table_over_one_model(tmp_path)
    main(["explain", str(table), "--row", "fpa", "--col", "toy8"])
    out, err = capsys.readouterr()
    assert "all 5 files verified" in out and not err  # the table, 3 evaluations, the model (no usage line)

    model.write_text("other weights")
    try:
        main(["explain", str(table), "--row", "fpa", "--col", "toy8"])
    except SystemExit as exit_info:
        assert exit_info.code == 1
    out, err = capsys.readouterr()
    problems = [line.strip() for line in err.splitlines()[2:]]
    assert err.splitlines()[1] == "2 problem(s):", err
    assert sorted(problem.split(" != ")[1].split()[1] for problem in problems) == ["input", "output"], err
    assert out.count("SHA256 MISMATCH") == 3  # each path to it still shows in the chain


def test_every_record_names_the_cpu_and_explain_shows_it(tmp_path, capsys):
    import torch  # a job that ran torch's kernels: its record names the math libraries too

    table, model = _table_over_one_model(tmp_path, seeds=(1,))
    main(["explain", str(table), "--row", "fpa", "--col", "toy8"])
    out = capsys.readouterr().out
    cpu_lines = [line.strip() for line in out.splitlines() if line.strip().startswith("cpu: ")]
    assert cpu_lines, out  # shown once while every record of the chain ran on the same CPU
    assert all(f"torch {torch.__version__}" in line and "MKL " in line for line in cpu_lines), cpu_lines


def _table_with_labels(tmp_path, config):
    """One cell of row FPA (run fpa) over two seeds, in % (scale 100), its evaluations' config ``config``."""
    sources = []
    for seed in (42, 43):
        evaluation = tmp_path / f"eval-{seed}.json"
        with Job("evaluate", config, {}).output(evaluation) as tmp:
            write_text(tmp, "{}")
        sources.append({"seed": seed, "value": 0.8 + seed / 1000, "files": [str(evaluation)],
                        "sha256": {str(evaluation): sha256_path(evaluation)}})
    table = tmp_path / "table.csv"
    cells = {"fpa": {"toy8": {"text": "84.25 ± 0.71", "sources": sources, "label": "FPA", "scale": 100}}}
    with Job("aggregate", {}, {}).output(table, cells=cells) as tmp:
        write_text(tmp, "Method,toy8\nFPA,84.25 ± 0.71\n")
    return table


def test_the_row_as_printed_values_in_percent_and_the_environment(tmp_path, capsys):
    table = _table_with_labels(tmp_path, {"benchmark": "x" * 300})
    main(["explain", str(table), "--row", "FPA", "--col", "toy8"])
    out = capsys.readouterr().out
    assert "row 'FPA' (run fpa), column 'toy8' = 84.25 ± 0.71  (mean ± sample std over 2 seeds)" in out
    assert "seed 42: 84.20 %" in out and "seed 43: 84.30 %" in out
    assert out.count("packages: {") == 1 and '"python":' in out  # recorded once, the same all along
    assert "... (--whole: all of it)" in out and "x" * 300 not in out

    main(["explain", str(table), "--row", "fpa", "--col", "toy8", "--whole"])
    assert "x" * 300 in capsys.readouterr().out


def test_an_unknown_row_lists_the_rows_as_printed(tmp_path, capsys):
    table = _table_with_labels(tmp_path, {})
    try:
        main(["explain", str(table), "--row", "Off-RL", "--col", "toy8"])
    except SystemExit as exit_info:
        assert exit_info.code == 2
    assert "unknown row 'Off-RL'; expected a row as the table prints it, one of ['FPA'] (or its run: ['fpa'])" \
        in capsys.readouterr().err


def _workflow_tree(workdir, monkeypatch, rows=(("fpa", "FPA"),), headers=(("toy9", "toy9"),)):
    """A workflow's results as its jobs write them, in ``workdir``, with paths relative to it: per row
    (run, label as printed) an evaluation of seeds 42 and 43 on each benchmark, and the table
    ``results/tables/toy.csv`` with a column per (benchmark, header as printed)."""
    monkeypatch.chdir(workdir)
    cells = {}
    for run, label in rows:
        for bench, header in headers:
            sources = []
            for seed in (42, 43):
                evaluation = f"results/eval/toy/{run}/{seed}/{bench}.json"
                with Job("evaluate", {"seed": seed}, {}).output(evaluation) as tmp:
                    write_text(tmp, f'{{"pass_at_1": 0.{seed}}}')
                sources.append({"seed": seed, "value": seed / 100, "files": [evaluation],
                                "sha256": {evaluation: sha256_path(evaluation)}})
            cells.setdefault(run, {})[bench] = {"key": bench, "header": header, "label": label, "scale": 100,
                                                "text": "42.50 ± 0.71", "sources": sources}
    return _aggregate(cells)


def _aggregate(cells):
    """The table of ``cells`` (re-run as Snakemake re-runs it after an evaluation changed)."""
    table = "results/tables/toy.csv"
    evaluations = {path: path for row in cells.values() for cell in row.values() for source in cell["sources"]
                   for path in source["files"]}
    job = Job("aggregate", {}, evaluations)
    with job.output(table, cells=cells) as tmp:
        write_text(tmp, "table\n")
    with job.output("results/tables/toy.json") as tmp:  # the table's JSON: its cells are its content
        write_json(tmp, {"cells": cells})
    return table, cells


def _explain(capsys, *argv) -> tuple[int, str, str]:
    try:
        main(["explain", *argv])
        code = 0
    except SystemExit as exit_info:
        code = exit_info.code
    out, err = capsys.readouterr()
    return code, out, err


def test_a_record_copied_beside_another_file_is_refused(tmp_path, monkeypatch, capsys):
    """Seed 43's evaluation replaced by a copy of seed 42's file and record, and the table re-run:
    every sha256 matches, but the record is seed 42's."""
    table, cells = _workflow_tree(tmp_path, monkeypatch)
    for name in ("toy9.json", "toy9.json.prov.json"):
        shutil.copy(f"results/eval/toy/fpa/42/{name}", f"results/eval/toy/fpa/43/{name}")
    copied = "results/eval/toy/fpa/43/toy9.json"
    cells["fpa"]["toy9"]["sources"][1]["sha256"] = {copied: sha256_path(copied)}
    _aggregate(cells)
    code, out, err = _explain(capsys, table, "--row", "FPA", "--col", "toy9")
    assert code == 1 and err.splitlines()[1:] == [
        "1 problem(s):", f"  {copied}: its record {copied}.prov.json describes results/eval/toy/fpa/42/toy9.json, "
        "not this file (a copied or moved file and record)"], err
    seed_43 = out[out.index("seed 43:"):]
    assert "RECORD OF ANOTHER FILE" in seed_43 and '"seed":42' not in seed_43, out


def test_a_moved_table_is_refused_and_explain_runs_from_any_directory(tmp_path, monkeypatch, capsys):
    table, _ = _workflow_tree(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path / "results" / "eval")  # the records' paths are relative to tmp_path
    code, out, err = _explain(capsys, "../tables/toy.csv", "--row", "fpa", "--col", "toy9")
    assert code == 0 and "all 3 files verified" in out, out + err
    (tmp_path / "elsewhere").mkdir()
    for name in ("toy.csv", "toy.csv.prov.json"):
        shutil.copy(tmp_path / "results" / "tables" / name, tmp_path / "elsewhere" / name)
    code, out, err = _explain(capsys, "../../elsewhere/toy.csv", "--row", "fpa", "--col", "toy9")
    assert (code, out) == (2, "") and err == (
        "fpa explain: error: ../../elsewhere/toy.csv: its record ../../elsewhere/toy.csv.prov.json describes "
        "results/tables/toy.csv, not this file (a copied or moved file and record); explain the table where its "
        "job wrote it\n")


def test_an_ambiguous_row_or_column_lists_its_candidates(tmp_path, monkeypatch, capsys):
    table, _ = _workflow_tree(tmp_path, monkeypatch, rows=(("fpa", "FPA"), ("fpa_lam2", "FPA")),
                              headers=(("toy8", "Toy"), ("toy9", "Toy")))
    code, _, err = _explain(capsys, table, "--row", "FPA", "--col", "toy9")
    assert code == 2 and err == (f"fpa explain: error: {table}: row 'FPA' is ambiguous: the table prints it for the "
                                 "runs ['fpa', 'fpa_lam2']; name one by its run: --row fpa or --row fpa_lam2\n")
    code, _, err = _explain(capsys, table, "--row", "fpa_lam2", "--col", "toy")
    assert code == 2 and err == (f"fpa explain: error: {table}: column 'toy' is ambiguous: the table prints it for "
                                 "the keys ['toy8', 'toy9']; name one by its key: --col toy8 or --col toy9\n")
    code, out, _ = _explain(capsys, table, "--row", "fpa_lam2", "--col", "toy9")
    assert code == 0 and "row 'FPA' (run fpa_lam2), column 'Toy' = " in out
    assert "results/eval/toy/fpa_lam2/42/toy9.json" in out and "/fpa/" not in out


def test_a_file_that_is_no_table_says_what_it_is_and_a_tables_json_explains(tmp_path, monkeypatch, capsys):
    table, _ = _workflow_tree(tmp_path, monkeypatch)
    takes = "explain takes results/tables/<name>.csv (or .md, .tex, .html, .json)"
    evaluation = "results/eval/toy/fpa/42/toy9.json"
    for path, what in ((evaluation, "is an output of rule 'evaluate', not a table"),
                       (f"{table}.prov.json", f"is the provenance record of {table}, not a table")):
        code, _, err = _explain(capsys, path, "--row", "fpa", "--col", "toy9")
        assert (code, err) == (2, f"fpa explain: error: {path} {what}: {takes}\n")
    code, out, err = _explain(capsys, "results/tables/toy.json", "--row", "fpa", "--col", "toy9")
    assert code == 0 and "all 3 files verified" in out, out + err


def test_rows_a_reader_cannot_tell_apart_or_a_label_read_as_a_key_are_ambiguous(tmp_path, monkeypatch, capsys):
    """Tables written before the judge refused them (issue 58): a row labelled as another row's run, and two
    labels alike but for an invisible character, are ambiguous rather than answered by one of them."""
    table, _ = _workflow_tree(tmp_path, monkeypatch, rows=(("fpa", "FPA"), ("offrl", "fpa"), ("sft", "F\u200bPA v2"),
                                                           ("kto", "FPA v2")))
    code, _, err = _explain(capsys, table, "--row", "fpa", "--col", "toy9")
    assert code == 2 and err == (f"fpa explain: error: {table}: row 'fpa' is ambiguous: the table prints it for the "
                                 "runs ['fpa', 'offrl']; name one by its run: --row fpa or --row offrl\n")
    code, _, err = _explain(capsys, table, "--row", "FPA v2", "--col", "toy9")
    assert code == 2 and "the table prints it for the runs ['kto', 'sft']" in err
    code, out, _ = _explain(capsys, table, "--row", "kto", "--col", "toy9")
    assert code == 0 and "(run kto)" in out


def _chain(workdir, runs=("fpa", "offrl")):
    """A workflow's chain in ``workdir`` (the current directory): a user's benchmark file (outside the
    workflow) validated, a base model, per run a checkpoint trained from it and evaluations of seeds 42 and
    43 on the benchmark, and the table over them."""
    write_text(workdir / "mine.jsonl", '{"problem": "1+1", "answer": "2"}\n')
    benchmark, model = "results/benchmarks/file/mine.jsonl", "results/models/toy/base"
    with Job("validate_benchmark", {"source": "file"}, {"file": str(workdir / "mine.jsonl")}).output(benchmark) as tmp:
        write_text(tmp, "{}\n")
    with Job("toy_base_model", {}, {}).output(model) as tmp:
        write_text(tmp, "weights")
    cells = {}
    for run in runs:
        checkpoint = f"results/train/toy/{run}/42/checkpoint"
        with Job("train", {"run": run}, {"model": model}).output(checkpoint) as tmp:
            write_text(tmp, f"{run} weights")
        sources = []
        for seed in (42, 43):
            evaluation = f"results/eval/toy/{run}/{seed}/mine.json"
            with Job("evaluate", {"seed": seed}, {"checkpoint": checkpoint, "benchmark": benchmark}).output(
                    evaluation) as tmp:
                write_text(tmp, f'{{"pass_at_1": 0.{seed}}}')
            sources.append({"seed": seed, "value": seed / 100, "files": [evaluation],
                            "sha256": {evaluation: sha256_path(evaluation)}})
        cells[run] = {"mine": {"key": "mine", "header": "mine", "label": run, "scale": 100, "text": "42.50",
                               "sources": sources}}
    return _aggregate(cells)


def test_an_outside_input_names_its_config_key_and_each_environment_is_printed_once(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    table, _ = _chain(tmp_path)
    code, out, err = _explain(capsys, table, "--row", "fpa", "--col", "mine")
    assert code == 0 and not err, out + err
    assert f"{tmp_path}/mine.jsonl  [sha256 ok; outside input named by the config's benchmarks.mine.path]" in out
    assert sum(line.strip().startswith("cpu") for line in out.splitlines()) == 1, out  # one environment


def test_a_file_of_the_workflow_without_its_record_breaks_the_chain(tmp_path, monkeypatch, capsys):
    """Seed 43's evaluation replaced by a copy of seed 42's file without its record, the table re-run; and a
    finished evaluation's record deleted (issue 58): each is a broken chain, named in one line."""
    monkeypatch.chdir(tmp_path)
    table, cells = _chain(tmp_path)
    copied = "results/eval/toy/fpa/43/mine.json"
    shutil.copy("results/eval/toy/fpa/42/mine.json", copied)
    os.remove(copied + ".prov.json")
    cells["fpa"]["mine"]["sources"][1]["sha256"] = {copied: sha256_path(copied)}
    _aggregate(cells)
    code, out, err = _explain(capsys, table, "--row", "fpa", "--col", "mine")
    assert code == 1 and err.splitlines()[1:] == [
        "1 problem(s):", f"  {copied}: no provenance record ({copied}.prov.json): the chain behind it is broken "
        "(only an input the config names may have none)"], err
    assert f"{copied}  [BROKEN CHAIN: no provenance record]" in out
    os.remove("results/models/toy/base.prov.json")
    code, _, err = _explain(capsys, table, "--row", "offrl", "--col", "mine")
    assert code == 1 and "results/models/toy/base: no provenance record" in err


def test_another_rows_problem_is_a_note_not_this_cells(tmp_path, monkeypatch, capsys):
    """FPA's checkpoint deleted while it re-trains and its evaluation not yet re-run: Off-RL's cell holds."""
    monkeypatch.chdir(tmp_path)
    table, _ = _chain(tmp_path)
    os.remove("results/train/toy/fpa/42/checkpoint")
    os.remove("results/eval/toy/fpa/43/mine.json")
    code, out, err = _explain(capsys, table, "--row", "offrl", "--col", "mine")
    assert code == 0 and not err, err
    assert "note: 1 problem(s) of the table's other cells, not behind this one:\n  " \
           "results/eval/toy/fpa/43/mine.json: missing" in out
    code, _, err = _explain(capsys, table, "--row", "fpa", "--col", "mine")
    assert code == 1 and "results/train/toy/fpa/42/checkpoint: missing" in err
