"""One schema, one truth: ``fpa check-config`` and planning (``snakemake -n``) refuse the same configs,
each with the same one line naming the file and the key.

The corpus is ``config/config.yaml`` with one small edit each. Every config goes through
``fpa check-config`` (one subprocess for all) and through what planning does with it: Snakemake's own
loader, then the judge the Snakefile calls (``fpa.planning.judge``, which check-config calls too); a few go through
real ``snakemake -n`` runs, which proves the Snakefile calls that validation.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from workflow_helpers import copy_project

from fpa.errors import ConfigError
from fpa.planning import judge

from hostile_input.fuzz_config import workflow_lines

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "config" / "config.yaml").read_text()
METHODS = """methods:
  offrl: {objective: offrl, label: Off-RL}
  fpa: {objective: fpa, label: FPA, params: {lam: 1.0}}
"""
YAML_SYNTAX = "invalid YAML: "
MODELS = 'models:\n  toy:\n    source: toy\n    prompt_template: "Q: {problem}\\nA:"\n    toy: {preset: default}\n'


@dataclass(frozen=True)
class Bad:
    name: str
    old: str  # text of config/config.yaml ...
    new: str  # ... replaced by this
    expected: str  # regex the one-line message continues with after "<file>: "
    at_line: bool = False  # ... after "<file>:<line>:<column>: " (YAML errors)

    def text(self) -> str:
        assert BASE.count(self.old) == 1, f"{self.name}: {self.old!r} is not once in config/config.yaml"
        return BASE.replace(self.old, self.new)


def _in_fpa(old: str, new: str) -> tuple[str, str]:
    line = "  fpa: {objective: fpa, label: FPA, params: {lam: 1.0}}"
    return line, line.replace(old, new)


CORPUS = [
    # non-finite numbers, wherever a number goes
    Bad("lr_nan", "  lr: 2.0e-4", "  lr: .nan", r"training\.lr: expected a finite number, got nan"),
    Bad("lr_inf", "  lr: 2.0e-4", "  lr: .inf", r"training\.lr: expected a finite number, got inf"),
    Bad("lr_overflow", "  lr: 2.0e-4", "  lr: 1.0e+999", r"training\.lr: expected a finite number, got inf"),
    Bad("lr_nan_string", "  lr: 2.0e-4", '  lr: ".nan"', r"training\.lr: expected number, got '\.nan'"),
    Bad("lr_NaN_word", "  lr: 2.0e-4", "  lr: NaN", r"training\.lr: expected number, got 'NaN'"),
    Bad("lr_zero", "  lr: 2.0e-4", "  lr: 0", r"training\.lr: expected number > 0, got 0"),
    Bad("param_inf", *_in_fpa("lam: 1.0", "lam: .inf"),
        r"methods\.fpa\.params\.lam: expected a finite number, got inf"),
    Bad("sweep_value_nan", *_in_fpa("}}", "}, sweep: {lam: [1, .nan]}}"),
        r"methods\.fpa\.sweep\.lam\.1: expected a finite number, got nan"),
    Bad("method_training_inf", *_in_fpa("}}", "}, training: {max_grad_norm: .inf}}"),
        r"methods\.fpa\.training\.max_grad_norm: expected a finite number, got inf"),
    Bad("toy_model_setting_nan", "toy: {preset: default}", "toy: {preset: default, lr: .nan}",
        r"models\.toy\.toy\.lr: expected a finite number, got nan"),
    Bad("resources_nan", "cache_reference: {cpus_per_task: 1}",
        "cache_reference: {cpus_per_task: 1}\n  train: {mem_mb: .nan}",
        r"resources\.train\.mem_mb: expected a finite number, got nan"),
    # seeds as the rules' seed=\d+ wildcard takes them
    Bad("seed_negative", "seeds: [42, 43, 44]", "seeds: [42, 43, -1]", r"seeds\.2: expected number >= 0, got -1"),
    Bad("seed_float", "seeds: [42, 43, 44]", "seeds: [42, 43, 44.0]", r"seeds\.2: expected integer, got 44\.0"),
    Bad("seed_string", "seeds: [42, 43, 44]", "seeds: [42, 43, x]", r"seeds\.2: expected integer, got 'x'"),
    Bad("seed_bool", "seeds: [42, 43, 44]", "seeds: [42, 43, true]", r"seeds\.2: expected integer, got True"),
    Bad("method_seed_float", *_in_fpa("}}", "}, seeds: [1.5]}"), r"methods\.fpa\.seeds\.0: expected integer, got 1\.5"),
    Bad("seed_repeated", "seeds: [42, 43, 44]", "seeds: [42, 43, 42]",
        r"seeds: expected distinct values, got \[42, 43, 42\]"),
    Bad("method_seed_repeated", *_in_fpa("}}", "}, seeds: [1, 1]}"),
        r"methods\.fpa\.seeds: expected distinct values, got \[1, 1\]"),
    Bad("dataset_seed_negative", "  seed: 42", "  seed: -3", r"dataset\.seed: expected number >= 0, got -3"),
    # integers beyond what their consumers hold (issue 42): seeds as NumPy's np.random.seed takes them,
    # counts and sizes as a C int
    Bad("seed_too_big", "seeds: [42, 43, 44]", "seeds: [42, 43, 1000000000000000000000000000000]",
        r"seeds\.2: expected number <= 4294967295, got 1000000000000000000000000000000"),
    Bad("dataset_seed_too_big", "  seed: 42", "  seed: 4294967296", r"dataset\.seed: expected number <= 4294967295"),
    Bad("method_seed_too_big", *_in_fpa("}}", "}, seeds: [18446744073709551616]}"),
        r"methods\.fpa\.seeds\.0: expected number <= 4294967295, got 18446744073709551616"),
    Bad("batch_size_too_big", "  batch_size: 256", "  batch_size: 2147483648",
        r"generation\.batch_size: expected number <= 2147483647, got 2147483648"),
    Bad("resources_too_big", "cache_reference: {cpus_per_task: 1}", "cache_reference: {cpus_per_task: 4294967296}",
        r"resources\.cache_reference\.cpus_per_task: expected number <= 2147483647, got 4294967296"),
    # a template that loses its meaning: every prompt without its problem
    Bad("prompt_without_problem", MODELS.split("\n")[3], '    prompt_template: "Q: {question}\\nA:"',
        r"models\.toy\.prompt_template: expected the placeholder \{problem\} .*got 'Q: \{question\}\\nA:'"),
    # duplicate keys (Snakemake's loader keeps the last) and YAML syntax
    Bad("duplicate_top_level_key", "seeds: [42, 43, 44]", "seeds: [42, 43, 44]\nmethods:\n  dpo: {objective: dpo}",
        r"methods: duplicate key; expected each key once, got it at lines \d+ and \d+", at_line=True),
    Bad("duplicate_nested_key", "  lr: 2.0e-4", "  lr: 2.0e-4\n  lr: 1.0e-4",
        r"training\.lr: duplicate key; expected each key once, got it at lines \d+ and \d+", at_line=True),
    Bad("duplicate_flow_key", *_in_fpa("label: FPA,", "label: FPA, label: F,"),
        r"methods\.fpa\.label: duplicate key; expected each key once, got it at lines \d+ and \d+", at_line=True),
    Bad("yaml_unclosed_list", "seeds: [42, 43, 44]", "seeds: [42, 43, 44", YAML_SYNTAX, at_line=True),
    Bad("yaml_tab_indent", "  lr: 2.0e-4", "\tlr: 2.0e-4", YAML_SYNTAX, at_line=True),
    # empty maps that would plan less than the config names
    Bad("sweep_empty", *_in_fpa("}}", "}, sweep: {}}"), r"methods\.fpa\.sweep: expected at least 1 entry, got \{\}"),
    Bad("methods_empty", METHODS, "methods: {}\n",
        r"methods: expected at least one method for figures\.training_dynamics, .*got \{\}"),
    Bad("models_empty", MODELS, "models: {}\n", r"models: expected at least 1 entry, got \{\}"),
    # unknown keys, wrong types, bad values
    Bad("unknown_top_level_key", "seeds: [42, 43, 44]", "seeds: [42, 43, 44]\nepochs: 3",
        r"epochs: unknown key; expected one of \["),
    Bad("unknown_training_key", "  epochs: 2", "  epochz: 2", r"training\.epochz: unknown key; expected one of \["),
    Bad("wrong_type", "  batch_size: 256", "  batch_size: many",
        r"generation\.batch_size: expected integer, got 'many'"),
    Bad("negative_batch_size", "  batch_size: 256", "  batch_size: -4",
        r"generation\.batch_size: expected number >= 1, got -4"),
    Bad("negative_batch_problems", "  batch_problems: 8", "  batch_problems: -8",
        r"training\.batch_problems: expected number >= 1, got -8"),
    Bad("unknown_objective", "{objective: offrl,", "{objective: offrl_v2,",
        r"methods\.offrl\.objective: expected one of \['apo', 'dpo'"),
    Bad("param_out_of_range", *_in_fpa("lam: 1.0", "lam: -1.0"), r"methods\.fpa\.params\.lam: expected number >= 0"),
    Bad("unknown_param", *_in_fpa("lam: 1.0", "lamda: 1.0"), r"methods\.fpa\.params\.lamda: unknown parameter of fpa"),
    Bad("table_unknown_benchmark", "toy: [toy8, toy9, toy10]", "toy: [toy8, toy11]",
        r"tables\.toy\.columns: unknown benchmark 'toy11'"),
    Bad("table_unknown_method", "toy: [toy8, toy9, toy10]", "toy: {columns: [toy8], rows: [offrl, dpo]}",
        r"tables\.toy\.rows: 'dpo' names no run of model 'toy'"),
    Bad("paper_unknown_column", "toy: [toy8, toy9, toy10]", "toy: {columns: [toy8], paper_results: "
        "{file: config/paper_results.yaml, table: main, model: qwen2.5-math-7b, columns: {toy9: math500}}}",
        r"tables\.toy\.paper_results\.columns: 'toy9' is no column of the table; expected some of \['toy8', 'avg'\]"),
    Bad("paper_unknown_model", "toy: [toy8, toy9, toy10]", "toy: {columns: [toy8], paper_results: "
        "{file: config/paper_results.yaml, table: main, model: qwen9, columns: {toy8: math500}}}",
        r"tables\.toy\.paper_results\.model: \S+paper_results\.yaml table 'main' has no model 'qwen9'; expected one "
        r"of \['llama-3\.2-3b-instruct', 'qwen2\.5-math-7b', 'qwen3-4b-base'\]"),
    Bad("figure_unknown_method", "training_dynamics: {}", "training_dynamics: {fpa: dpo}",
        r"figures\.training_dynamics\.fpa: unknown method 'dpo'"),
    Bad("curve_unknown_benchmark", "curve_benchmarks: [toy8_curve]", "curve_benchmarks: [toy7]",
        r"curve_benchmarks: unknown benchmark 'toy7'"),
]
SYNTAX_ERRORS = {bad.name for bad in CORPUS if bad.expected == YAML_SYNTAX}  # Snakemake's loader refuses them


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("bad_configs")
    paths = {}
    for bad in CORPUS:
        paths[bad.name] = directory / f"{bad.name}.yaml"
        paths[bad.name].write_text(bad.text())
    return paths


@pytest.fixture(scope="module")
def check_config_lines(corpus) -> dict[str, str]:
    """Each corpus config's error line from one ``fpa check-config`` call over the whole corpus."""
    result = subprocess.run([sys.executable, "-m", "fpa", "check-config", *map(str, corpus.values())],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and not result.stdout, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == len(corpus), result.stderr  # one line per config, nothing else (no usage line)
    prefix = "fpa check-config: error: "
    assert all(line.startswith(prefix) for line in lines), result.stderr
    return {name: next(line[len(prefix):] for line in lines if line[len(prefix):].startswith(f"{path}:"))
            for name, path in corpus.items()}


def _planning_refusal(path: Path) -> str:
    """What planning says of ``path``: Snakemake's loader reads it, then the Snakefile's validation."""
    from snakemake.common.configfile import load_configfile
    from snakemake.exceptions import WorkflowError

    try:
        load_configfile(path)
    except WorkflowError as error:
        return f"snakemake: {error}"
    try:
        judge([path], ROOT)
    except ConfigError as error:
        return str(error)
    raise AssertionError(f"{path}: planning accepts it")


def test_the_base_of_the_corpus_is_accepted(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(BASE)
    result = subprocess.run([sys.executable, "-m", "fpa", "check-config", str(path)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith(f"{path}: ok"), result.stdout + result.stderr
    assert not result.stderr  # no usage line on a user's terminal or pipe


@pytest.mark.parametrize("bad", CORPUS, ids=lambda bad: bad.name)
def test_check_config_and_planning_refuse_alike(bad, corpus, check_config_lines):
    path, message = corpus[bad.name], check_config_lines[bad.name]
    at = r":\d+:\d+" if bad.at_line else ""
    assert "\n" not in message and re.match(re.escape(str(path)) + at + ": " + bad.expected, message), message
    planned = _planning_refusal(path)
    if bad.name in SYNTAX_ERRORS:
        # Snakemake reads a --configfile in its CLI before any workflow code runs, and names no line
        assert planned == "snakemake: Config file is not valid JSON or YAML. In case of YAML, make sure to not mix " \
                          "whitespace and tab indentation.", planned
    else:
        assert planned == message


def _dry_run(project: Path, workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(project / "Snakefile"),
                           "-d", str(workdir), *args], capture_output=True, text=True, timeout=300, cwd=project)


@pytest.mark.parametrize("name", ["duplicate_top_level_key", "lr_nan", "seed_float", "methods_empty", "seed_too_big",
                                  "prompt_without_problem"])
def test_snakemake_dry_run_refuses_with_the_same_line(name, corpus, check_config_lines, tmp_path):
    result = _dry_run(ROOT, tmp_path / "work", "--configfile", str(corpus[name]))
    assert result.returncode != 0
    assert f"config error: {check_config_lines[name]}" in result.stderr.splitlines(), result.stderr[-2000:]
    assert not (tmp_path / "work" / "results").exists()


def test_a_syntax_error_in_the_default_config_is_named_by_line_in_planning(tmp_path):
    project = copy_project(tmp_path)
    config = project / "config" / "config.yaml"
    config.write_text(CORPUS[[bad.name for bad in CORPUS].index("yaml_unclosed_list")].text())
    result = _dry_run(project, project)
    checked = subprocess.run([sys.executable, "-m", "fpa", "check-config", "config/config.yaml"], cwd=project,
                             capture_output=True, text=True)
    line = checked.stderr.strip().removeprefix("fpa check-config: error: ")
    assert re.fullmatch(r"config/config\.yaml:\d+:\d+: invalid YAML: did not find expected ',' or '\]' "
                        r"\(while parsing a flow sequence at line \d+, column \d+\)", line), checked.stderr
    assert f"config error: {line}" in result.stderr.splitlines(), result.stderr[-2000:]


def test_corpus_size():
    assert len(CORPUS) >= 20 and len({bad.name for bad in CORPUS}) == len(CORPUS)


BOMBS = {  # issue 34: each hung or crashed check-config and planning
    "alias_bomb": ("seeds: [42, 43, 44]", "\n".join(
        ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]"
                                                     for i in range(1, 10)]) + "\nseeds: *a9",
                   r"more than the limit of \d+ values with aliases expanded \(max_nodes\)"),
    "deep_nest": ("seeds: [42, 43, 44]", "seeds: " + "[" * 100_000 + "]" * 100_000,
                  r"nested deeper than the limit of \d+ levels \(max_depth\)"),
    "true_key_in_methods": ("methods:\n", "methods:\n  true: {objective: dpo}\n",
                            r"methods: key True \(bool\) is not a string; expected a string key \(quote it\)"),
}


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_bomb_in_the_default_config_is_refused_by_check_config_and_planning_in_one_line(tmp_path, bomb):
    old, new, expected = BOMBS[bomb]
    assert BASE.count(old) == 1
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(BASE.replace(old, new))
    checked = subprocess.run([sys.executable, "-m", "fpa", "check-config", "config/config.yaml"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    line = checked.stderr.strip().removeprefix("fpa check-config: error: ")
    assert checked.returncode == 2 and re.fullmatch(r"config/config\.yaml:\d+:\d+: " + expected, line), checked.stderr
    planned = _dry_run(ROOT, tmp_path)
    assert planned.returncode != 0, planned.stderr[-2000:]
    assert workflow_lines(planned.stderr) == [f"config error: {line}"], planned.stderr[-2000:]


TOP_LEVELS = {"list": "- models\n- seeds\n", "string": "just a string\n", "number": "42\n", "nested_list": "[[1]]\n"}


@pytest.mark.parametrize("top", TOP_LEVELS)
def test_a_config_whose_top_level_is_not_a_mapping_is_refused_in_one_line(tmp_path, top):
    """Issue 42: check-config printed a 16-line traceback. Planning of the default config (the Snakefile
    reads it first) prints the same one line; a --configfile is refused first by Snakemake's loader."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text(TOP_LEVELS[top])
    checked = subprocess.run([sys.executable, "-m", "fpa", "check-config", "config/config.yaml"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120)
    line = checked.stderr.strip().removeprefix("fpa check-config: error: ")
    kind = type(yaml.safe_load(TOP_LEVELS[top])).__name__
    assert checked.returncode == 2 and re.fullmatch(r"config/config\.yaml: <top level>: expected a mapping of settings "
                                                    rf"\(keys at the top level\), got {kind} .+", line), checked.stderr
    planned = _dry_run(ROOT, tmp_path)
    assert planned.returncode != 0, planned.stderr[-2000:]
    assert workflow_lines(planned.stderr) == [f"config error: {line}"], planned.stderr[-2000:]
    assert _planning_refusal(tmp_path / "config" / "config.yaml") == \
        "snakemake: Config file must be given as JSON or YAML with keys at top level."
