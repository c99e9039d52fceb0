"""``fpa explain``: a changed file behind several evaluations is reported once, on stderr only."""

from __future__ import annotations

from fpa.cli import main
from fpa.io import sha256_path, write_text
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
    assert len(cpu_lines) == 2, out  # the evaluation and the model (the table shows its header only)
    assert all(f"torch {torch.__version__}" in line and "MKL " in line for line in cpu_lines), cpu_lines
