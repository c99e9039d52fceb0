"""What is certain to fail is refused before the first job (issue 52): each case is config/config.yaml with
one edit that ``fpa check-config`` accepted and a job refused hours later; now check-config refuses it
with one line naming the key, and planning (the judge the Snakefile calls, after Snakemake's own
loader) refuses it with the same line. ``fpa plan-memory`` refuses bad sizes without a traceback."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fpa.cli import main
from fpa.planning.judge import merge

from hostile_input.fuzz_config import Verdict, check_config_verdict, planning_verdict, workflow_lines

ROOT = Path(__file__).resolve().parents[2]
BASE = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
HEADS_OF_QWEN = {"vocab_size": 151936, "hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                 "num_attention_heads": 14, "num_key_value_heads": 2}
VALIDATION = {"val": {"source": "validation", "grader": "toy", "n": 1}}


def _hub(**architecture) -> dict:
    """The default config's toy model replaced by a hub model of Qwen2.5-0.5B's shapes, ``architecture`` changed."""
    return {"models": {"hub": {"source": "hub", "hub_id": "Qwen/Qwen2.5-0.5B",
                               "architecture": {**HEADS_OF_QWEN, **architecture}}}}


CASES = {  # name: (edit merged into config/config.yaml, the line after "<file>: ")
    "greedy_offline_samples": ({"dataset": {"temperature": 0}}, "dataset.temperature: expected number > 0, got 0"),
    "max_length_below_the_prompt": (
        {"training": {"max_length": 25}},
        "training.max_length: expected more than the 25 tokens of the longest training prompt of model 'toy' (its "
        "prompt_template with a 10-operand chain, dataset.n_operands; a prompt must leave a completion token), got 25"),
    "max_length_of_a_method": (
        {"methods": {"fpa": {"training": {"max_length": 12}}}},
        "methods.fpa.training.max_length: expected more than the 25 tokens of the longest training prompt of model "
        "'toy' (its prompt_template with a 10-operand chain, dataset.n_operands; a prompt must leave a completion "
        "token), got 12"),
    "max_length_of_a_sweep": (
        {"methods": {"fpa": {"sweep": {"max_length": [256, 20]}}}},
        "methods.fpa.sweep.max_length: expected more than the 25 tokens of the longest training prompt of model "
        "'toy' (its prompt_template with a 10-operand chain, dataset.n_operands; a prompt must leave a completion "
        "token), got 20"),
    "selection_on_an_empty_validation_split": (
        {"dataset": {"validation_fraction": 0}, "benchmarks": VALIDATION, "model_selection": {"benchmark": "val"}},
        "benchmarks.val.source: a validation benchmark is the dataset's held-out problems; expected "
        "dataset.validation_fraction > 0, got 0"),
    "column_on_an_empty_validation_split": (
        {"dataset": {"validation_fraction": 0}, "benchmarks": VALIDATION, "tables": {"val": ["val"]}},
        "benchmarks.val.source: a validation benchmark is the dataset's held-out problems; expected "
        "dataset.validation_fraction > 0, got 0"),
    "toy_unknown_field": (
        {"models": {"toy": {"toy": {"d_modle": 128}}}},
        "models.toy.toy.d_modle: unknown key; expected one of ['batch_size', 'd_ff', 'd_model', 'grad_clip', "
        "'log_every', 'lr', 'min_operands', 'n_heads', 'n_layers', 'n_operands', 'n_train_problems', "
        "'prompt_template', 'seed', 'slip_rate', 'steps', 'trace_style', 'warmup_steps', 'weight_decay'] or preset"),
    "toy_missing_preset": ({"models": {"toy": {"toy": {"preset": "huge"}}}},
                           "models.toy.toy.preset: expected one of ['ci', 'default'], got 'huge'"),
    "toy_impossible_size": ({"models": {"toy": {"toy": {"d_model": 100}}}},
                            "models.toy.toy.d_model: expected 64 * n_heads = 128 (head_dim 64), got 100"),
    "toy_no_heads": ({"models": {"toy": {"toy": {"n_heads": 0, "d_model": 0}}}},
                     "models.toy.toy.d_model: expected an integer 1 <= d_model <= 2147483647, got 0"),
    "toy_string_size": ({"models": {"toy": {"toy": {"n_layers": "two"}}}},
                        "models.toy.toy.n_layers: expected integer, got 'two'"),
    "toy_template_without_problem": (
        {"models": {"toy": {"toy": {"prompt_template": "Q: {question}"}}}},
        "models.toy.toy.prompt_template: expected the placeholder {problem} (replaced by the problem's text, so that "
        "every prompt shows its problem), got 'Q: {question}'"),
    "toy_chat_template": ({"models": {"toy": {"chat_template": True}}},
                          "models.toy.chat_template: a toy model's tokenizer has no chat template; expected false, "
                          "got true"),
    "hub_zero_heads": (_hub(num_attention_heads=0), "models.hub.architecture.num_attention_heads: expected an "
                       "integer 1 <= num_attention_heads <= 2147483647, got 0"),
    "hub_string_size": (_hub(vocab_size="151936"), "models.hub.architecture.vocab_size: expected an integer "
                        "1 <= vocab_size <= 2147483647, got '151936'"),
    "hub_negative_size": (_hub(num_hidden_layers=-24), "models.hub.architecture.num_hidden_layers: expected an "
                          "integer 1 <= num_hidden_layers <= 2147483647, got -24"),
    "hub_ungrouped_heads": (_hub(num_key_value_heads=3), "models.hub.architecture.num_key_value_heads: expected a "
                            "divisor of num_attention_heads (14; each key/value head serves a group of them), got 3"),
    "toy_chains_inverted": ({"dataset": {"min_operands": 12}},
                            "dataset.min_operands: expected 2 <= min_operands <= n_operands = 10, got 12"),
    # issue 58: a run that reads its model's reference cache trains with the settings the cache is built with
    "cache_max_length_of_a_method": (
        {"methods": {"fpa": {"training": {"max_length": 200}}}},
        "methods.fpa.training.max_length: 200 differs from training.max_length: 256, with which the reference cache "
        "of model 'toy' is built (max_length 256; run 'fpa' reads it at 200); expected the top-level value, or "
        "training.reference: online for this run"),
    "cache_precision_of_a_model": (
        {"models": {"toy": {"training": {"precision": "bf16"}}}},
        "models.toy.training.precision: 'bf16' differs from training.precision: 'fp32', with which the reference "
        "cache of model 'toy' is built (precision 'fp32'; run 'offrl' reads it at 'bf16'); expected the top-level "
        "value, or training.reference: online for this run"),
    "cache_head_precision_of_a_sweep": (
        {"methods": {"fpa": {"sweep": {"head_precision": ["fp32", "bf16"]}}}},
        "methods.fpa.sweep.head_precision: 'bf16' differs from training.head_precision: 'auto', with which the "
        "reference cache of model 'toy' is built (dtype 'float32'; run 'fpa_head_precisionbf16' reads it at "
        "'bfloat16'); expected the top-level value, or training.reference: online for this run"),
    "future_policy_between_snapshots": (
        {"future_policy": {"anchor_step": 30, "target_steps": [50]}, "figures": {"future_policy_validation": {}}},
        "future_policy.anchor_step: run 'offrl' of model 'toy' takes a snapshot every 25 steps "
        "(training.snapshot_every, 0: none); expected a multiple of it, got 30"),
}


def write_config(directory: Path, edit: dict) -> Path:
    config = merge(copy.deepcopy(BASE), edit)
    if "hub" in config["models"]:
        del config["models"]["toy"]
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_a_run_that_reads_no_cache_may_train_at_its_own_max_length(tmp_path):
    path = write_config(tmp_path, {"methods": {"fpa": {"training": {"max_length": 200, "reference": "online"}}}})
    assert check_config_verdict(path) == planning_verdict(path) == Verdict(True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_config_and_planning_refuse_with_one_line(tmp_path, name):
    edit, expected = CASES[name]
    path = write_config(tmp_path, edit)
    line = f"{path}: {expected}"
    assert check_config_verdict(path) == Verdict(False, line)
    assert planning_verdict(path) == Verdict(False, line)


def test_the_cases_edit_an_accepted_config(tmp_path):
    """The base of every case, and the cases' edits set right, are accepted: each case fails on its edit."""
    # a run that trains at its own max_length runs its reference beside it (a cache is built at the top level's)
    fixed = [{"training": {"max_length": 26}},
             {"methods": {"fpa": {"sweep": {"max_length": [256, 26]}, "training": {"reference": "online"}}}},
             {"dataset": {"validation_fraction": 0.05}, "benchmarks": VALIDATION, "tables": {"val": ["val"]}},
             {"models": {"toy": {"toy": {"preset": "ci", "n_heads": 1, "d_model": 64}}}}, _hub(),
             {"future_policy": {"anchor_step": 25, "target_steps": [50]}, "figures": {"future_policy_validation": {}}}]
    for index, edit in enumerate(fixed):
        directory = tmp_path / str(index)
        directory.mkdir()
        assert check_config_verdict(write_config(directory, edit)).accepted, edit


def test_snakemake_dry_run_refuses_a_zero_head_architecture_in_one_line(tmp_path):
    """Before: planning's memory warning divided by the heads (a ZeroDivisionError traceback)."""
    path = write_config(tmp_path, CASES["hub_zero_heads"][0])
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-d", str(tmp_path / "work"),
                             "--configfile", str(path)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    # Snakemake prints an exception in the Snakefile to stdout: "ZeroDivisionError in file ...common.smk"
    assert result.returncode != 0 and "Error in file" not in result.stdout, result.stdout
    assert workflow_lines(result.stderr) == [f"config error: {path}: {CASES['hub_zero_heads'][1]}"]


@pytest.mark.parametrize("option, value, expected", [
    ("--gpu-memory-gb", "-1", "--gpu-memory-gb: expected a finite number > 0, got -1.0"),
    ("--gpu-memory-gb", "nan", "--gpu-memory-gb: expected a finite number > 0, got nan"),
    ("--train-hfu", "-0.5", "train_hfu (--train-hfu): expected a number in (0, 1], got -0.5"),
    ("--sequence-fill", "2", "sequence_fill (--sequence-fill): expected a number in (0, 1], got 2.0"),
    ("--train-problems", "-5", "train_problems (--train-problems): expected a finite number > 0, got -5"),
    ("--engine-start-s", "inf", "engine_start_s (--engine-start-s): expected a finite number >= 0, got inf"),
])
def test_plan_memory_refuses_a_bad_option_before_printing_anything(tmp_path, capsys, option, value, expected):
    path = write_config(tmp_path, _hub())
    with pytest.raises(SystemExit) as exit_:
        main(["plan-memory", str(path), "--root", str(tmp_path), option, value])
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and not out
    assert err.splitlines()[0] == f"fpa plan-memory: error: {expected}"


def test_plan_memory_of_a_good_hub_model_has_positive_sizes(tmp_path, capsys):
    main(["plan-memory", str(write_config(tmp_path, _hub())), "--root", str(tmp_path), "--json"])
    estimates = yaml.safe_load(capsys.readouterr().out)
    assert estimates and all(estimate["per_gpu"] > 0 for estimate in estimates)


def test_the_refused_max_length_is_where_the_reference_cache_fails(tmp_path):
    """The prompt length check-config names is the longest prompt of the training problems rule
    toy_train_problems writes, counted by the toy tokenizer; the reference cache's encoding refuses a
    sample at that max_length and takes them all one token above it."""
    import json
    import re

    from fpa.io import read_jsonl
    from fpa.samples.prompts import build_prompts
    from fpa.samples.tokenize import encode_sample
    from fpa.toy.tokenizer import build_tokenizer

    refusal = check_config_verdict(write_config(tmp_path, {"training": {"max_length": 8}})).line
    longest = int(re.search(r"more than the (\d+) tokens", refusal).group(1))
    dataset, problems = BASE["dataset"], tmp_path / "train.jsonl"
    main(["toy-problems", "--split", "train", "--config-json", json.dumps(dataset), "--seed", str(dataset["seed"]),
          "--out", str(problems)])
    prompts = build_prompts(BASE["models"]["toy"]["prompt_template"], [p["problem"] for p in read_jsonl(problems)])
    tokenizer = build_tokenizer()
    assert max(len(tokenizer(prompt, add_special_tokens=False)["input_ids"]) for prompt in prompts) == longest
    with pytest.raises(ValueError, match="leaves no completion"):
        for prompt in prompts:
            encode_sample(tokenizer, prompt, " 1", longest)
    assert all(encode_sample(tokenizer, prompt, " 1", longest + 1) for prompt in prompts)
