"""config/paper_results.yaml against the paper: the rows of every table re-parsed from its LaTeX
source (the RLVR entry's cells are the main table's), the future-policy KL numbers from its text,
each printed Avg. against its row's cells, each three-seed mean against its seeds; every cell lands
in a table of a paper config (the KL numbers in config/paper-prolonged.yaml's future_policy), and a
malformed file fails naming file, key and line."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest
import yaml

from fpa.aggregation.layout import build_layout
from fpa.aggregation.paper import load_paper_results
from fpa.errors import ConfigError
from fpa.planning import judge

ROOT = Path(__file__).resolve().parents[2]
# beside the checkout (../shared, as the data mirror), or beside a worktree's parent
PAPER_TEX = next((path for root in (ROOT.parent, ROOT.parent.parent)
                  if (path := root / "shared" / "paper" / "000_1af70f51aafc48ba.txt").is_file()),
                 ROOT.parent / "shared" / "paper" / "000_1af70f51aafc48ba.txt")
RESULTS = ROOT / "config" / "paper_results.yaml"
PAPER_CONFIGS = ["paper.yaml", "paper-code.yaml", "paper-stepdpo.yaml", "paper-rlvr.yaml"]
MODELS = ["qwen3-4b-base", "qwen2.5-math-7b", "llama-3.2-3b-instruct"]
MATH_ROWS = ["base", "sft", "dpo", "rpo", "dpop", "kto", "apo", "offrl", "fpa"]
SEED_ROWS = [f"{run}{seed}" for run in ("dpo", "offrl", "fpa") for seed in ("", "@42", "@43", "@44")]


def _latex_rows(label: str, part: int = 0) -> list[list[str]]:
    """The number cells of each data row of the tabular (``part``: which, in a two-part table)
    before ``\\label{label}``, as printed: markup stripped, ``\\meanstd{m}{s}`` -> ``m±s``."""
    text = PAPER_TEX.read_text()
    end = text.index(rf"\label{{{label}}}")
    start = text.rindex(r"\begin{table", 0, end)
    body = text[start:text.index(r"\end{table", end)]
    tabular = re.split(r"\\begin\{tabular", body)[1 + part]
    tabular = tabular.split(r"\midrule", 1)[1].split(r"\bottomrule")[0]
    rows = []
    for line in tabular.split(r"\\"):
        cells = line.split("&")[1:]
        if not cells:
            continue  # a block head, or the space after the last row
        cleaned = []
        for cell in cells:
            cell = re.sub(r"\\meanstd\{([^}]*)\}\{([^}]*)\}", r"\1±\2", cell)
            cell = re.sub(r"\\(textbf|underline)\{|\\cellcolor\{\w+\}|[{}\s]", "", cell)
            cleaned.append("-" if cell == "$-$" else cell)
        rows.append(cleaned)
    return rows


def _printed(table: str, model: str, rows: list[str]) -> list[list[str]]:
    """The file's cells of ``rows`` as printed (``m ± s`` as the LaTeX's ``m±s``, "-" where absent,
    without the unit a converted column names: "96 GB" as "96")."""
    paper = load_paper_results(RESULTS)[table]
    return [[paper.cells[(model, row, column)][0].replace(" ± ", "±").split()[0] if (model, row, column) in paper.cells
             else "-" for column in paper.columns] for row in rows]


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason=f"the paper's LaTeX is not at {PAPER_TEX}")
@pytest.mark.parametrize("table, label, part, blocks", [
    ("main", "tab:main_results", 0, [(model, MATH_ROWS) for model in MODELS]),
    ("ablation", "tab:ablation_results", 0, [(MODELS[0], ["base", "offrl", "offrl_lowlr", "offrl_rs", "fpa_cor",
                                                          "fpa_incor", "offrl_kl", "fpa"])]),
    ("lambda_validation", "tab:lambda_ablation_val", 0, [(model, [model]) for model in MODELS]),
    ("stepdpo", "tab:stepdpo", 0, [(MODELS[0], ["base", "dpo", "offrl", "fpa"])]),
    ("code", "tab:coding_main", 0, [(model, ["base", "dpo", "offrl", "fpa"]) for model in (MODELS[0], MODELS[2])]),
    ("three_seeds", "tab:multiseed", 0, [(MODELS[0], SEED_ROWS)]),
    ("three_seeds_code", "tab:multiseed", 1, [(MODELS[0], SEED_ROWS)]),
    ("overhead", "tab:fpa_efficiency", 0, [(MODELS[0], ["offrl", "fpa"])]),
    ("lambda_test", "tab:lambda_ablation", 0, None),  # None: the file's rows, in its order
    ("tuning", "tab:baseline_tuning", 0, None),
])
def test_rows_equal_the_papers_latex(table, label, part, blocks):
    if table == "code":  # a wraptable: its \label sits above the tabular
        text = PAPER_TEX.read_text()
        start = text.index(r"\label{tab:coding_main}")
        tabular = text[start:text.index(r"\end{tabular}", start)].split(r"\midrule", 1)[1]
        latex = [[re.sub(r"\\(textbf|underline)\{|[{}\s]", "", c) for c in line.split("&")[1:]]
                 for line in tabular.split(r"\\") if "&" in line]
    else:
        latex = _latex_rows(label, part)
    if blocks is None:
        blocks = [(model, list(rows)) for model, rows in yaml.safe_load(RESULTS.read_text())[table]["models"].items()]
    expected = [row for model, rows in blocks for row in _printed(table, model, rows)]
    assert latex == expected


def test_the_rlvr_cells_are_the_main_tables():
    tables = load_paper_results(RESULTS)
    rlvr, main = tables["rlvr"], tables["main"]
    assert rlvr.label == main.label and rlvr.cells
    assert all(main.cells[key] == cell for key, cell in rlvr.cells.items())


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason=f"the paper's LaTeX is not at {PAPER_TEX}")
def test_the_future_policy_kl_numbers_are_the_texts_and_the_prolonged_configs():
    """"the KL divergence decreases from 12.69 for the 5K anchor to 0.67 with $\\lambda=2$" (at
    20K steps), for the anchor, targets and λ of config/paper-prolonged.yaml's future_policy."""
    text = " ".join(PAPER_TEX.read_text().split())
    anchor, lam, later = re.search(r"At (\d+)K steps, for example, the KL divergence decreases from ([\d.]+) for "
                                   r"the (\d+)K anchor to ([\d.]+) with \$\\lambda=(\d+)\$", text).group(3, 5, 1)
    printed = re.search(r"decreases from ([\d.]+) for the \d+K anchor to ([\d.]+)", text).groups()
    kl = load_paper_results(RESULTS)["future_policy_kl"]
    row = f"anchor{anchor}000_target{later}000"
    assert [kl.cells[("qwen3-4b-base", row, column)][0] for column in kl.columns] == list(printed)
    assert kl.columns == ("lam0", f"lam{lam}")
    config = judge([ROOT / "config" / "paper-prolonged.yaml"]).config
    settings = config["future_policy"]
    assert "qwen3-4b-base" in config["models"] and settings["anchor_step"] == int(anchor) * 1000
    assert int(later) * 1000 in settings["target_steps"] and {0, int(lam)} <= set(settings["lams"])


def test_every_printed_avg_is_its_rows_mean_to_rounding():
    """A transcription slip in any cell of a row moves its mean away from the printed Avg."""
    checked = 0
    for name, table in load_paper_results(RESULTS).items():
        rows: dict = {}
        for (model, row, column), (_, value, _) in table.cells.items():
            rows.setdefault((model, row), {})[column] = value
        for (model, row), cells in rows.items():
            if "avg" in cells:
                mean = statistics.fmean(v for c, v in cells.items() if c != "avg")
                assert abs(mean - cells["avg"]) <= 0.01 + 1e-9, (name, model, row, mean, cells["avg"])
                checked += 1
    assert checked > 100


# the paper's own: its Off-RL GaoKao seeds (52.76, 54.16, 54.77) average 53.897, printed 53.91
PAPERS_OWN_ROUNDING = {("three_seeds", "offrl", "gaokao")}


@pytest.mark.parametrize("table", ["three_seeds", "three_seeds_code"])
def test_three_seed_means_and_stds_are_their_seeds(table):
    paper = load_paper_results(RESULTS)[table]
    for (model, row, column), (text, value, _) in paper.cells.items():
        if "@" in row:
            continue
        seeds = [paper.cells[(model, f"{row}@{seed}", column)][1] for seed in (42, 43, 44)]
        std = float(text.split(" ± ")[1])
        tolerance = 0.015 if (table, row, column) in PAPERS_OWN_ROUNDING else 0.01
        assert abs(statistics.fmean(seeds) - value) <= tolerance, (row, column, seeds, text)
        assert abs(statistics.stdev(seeds) - std) <= 0.01, (row, column, seeds, text)


def test_every_cell_lands_in_a_table_of_a_paper_config():
    shown = {}
    for config_name in PAPER_CONFIGS:
        plan = judge([ROOT / "config" / config_name])
        config, runs = plan.config, plan.runs
        for name, spec in config["tables"].items():
            layout = build_layout(name, spec, config, runs)
            assert name not in shown, f"table {name!r} in two paper configs"
            shown[name] = len(layout.paper)
            assert layout.paper_label, f"{config_name}: tables.{name}: no paper_results"
    counts = {name: len(table.cells) for name, table in load_paper_results(RESULTS).items()
              if not table.label.startswith("fig:")}  # a figure's numbers: the test above
    assert shown == counts


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "paper_results.yaml"
    path.write_text(text)
    return path


GOOD = "main:\n  label: tab:main\n  columns: [toy8, avg]\n  models:\n    toy:\n      fpa: \"41.20 -\"\n"


@pytest.mark.parametrize("text, message", [
    (GOOD.replace('"41.20 -"', '"41.20"'), r"paper_results.yaml:6: main.models.toy.fpa: expected 2 values"),
    (GOOD.replace('"41.20 -"', '"41.2x -"'),
     r"paper_results.yaml:6: main.models.toy.fpa.toy8: expected a number, number±std or '-'"),
    (GOOD.replace('"41.20 -"', "41.20"), r"main.models.toy.fpa: expected the printed values as one string"),
    (GOOD.replace("  label: tab:main\n", ""), r"paper_results.yaml:2: main: expected keys label, columns, models"),
    (GOOD.replace("  models:", " models:"), r"paper_results.yaml:\d+:\d+: invalid YAML"),
    (GOOD.replace("[toy8, avg]", "[toy8, toy8]"), r"main.columns: expected a list of distinct column keys"),
    (GOOD.replace("  models:", "  units: {toy8: 1024}\n  models:"),
     r"paper_results.yaml:4: main.units.toy8: expected \{scale: <number > 0>, unit: <name>\}, got 1024"),
])
def test_a_malformed_file_names_file_key_and_line(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_paper_results(_write(tmp_path, text))
