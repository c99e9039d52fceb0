"""A hub model's training prompts against every max_length that will encode them, checked before it samples.

The toy's prompts are counted by the judge (tests/planning/test_feasible.py); a hub model's need its tokenizer,
so its ``check_prompt_budget`` job counts them, and sampling waits for that job."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from transformers import AutoTokenizer

from fpa.cli import main
from fpa.io import read_json, read_jsonl, write_jsonl
from fpa.planning import judge
from fpa.samples.tokenize import prompt_token_ids

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def problems(tmp_path_factory, mirror) -> Path:
    """Real MATH500 problems of the tiny mirror as training problems."""
    rows = read_jsonl(mirror / "tiny" / "math500" / "test.jsonl")
    path = tmp_path_factory.mktemp("problems") / "train.jsonl"
    write_jsonl(path, [{"id": row["unique_id"], "problem": row["problem"], "answer": row["answer"]} for row in rows])
    return path


def budget(max_length: int) -> str:
    return json.dumps({"model": "hub-model", "prompts": {"prompt_template": "Problem: {problem}\nSolution:",
                                                         "chat_template": False},
                       "max_length": [["training.max_length", 4096], ["methods.fpa.training.max_length", max_length]]})


def longest(toy_model_dir, problems) -> tuple[int, str]:
    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    return max((len(prompt_token_ids(tokenizer, f"Problem: {row['problem']}\nSolution:")), row["id"])
               for row in read_jsonl(problems))


def test_a_max_length_the_longest_prompt_fills_is_refused_naming_its_key(tmp_path, capsys, toy_model_dir, problems):
    tokens, problem_id = longest(toy_model_dir, problems)
    out = tmp_path / "prompt_budget.json"
    with pytest.raises(SystemExit) as exit_:
        main(["check-prompt-budget", "--model", str(toy_model_dir), "--problems", str(problems),
              "--config-json", budget(tokens), "--out", str(out)])
    assert exit_.value.code == 2 and not out.exists()
    assert (f"methods.fpa.training.max_length: expected more than the {tokens} tokens of the longest training prompt "
            f"of model 'hub-model' (problem {problem_id!r}; a prompt must leave a completion token), got {tokens}"
            in capsys.readouterr().err)


def test_a_max_length_with_room_records_the_longest_prompt(tmp_path, toy_model_dir, problems):
    tokens, problem_id = longest(toy_model_dir, problems)
    out = tmp_path / "prompt_budget.json"
    main(["check-prompt-budget", "--model", str(toy_model_dir), "--problems", str(problems),
          "--config-json", budget(tokens + 1), "--out", str(out)])
    assert read_json(out) == {"longest_prompt": {"problem_id": problem_id, "tokens": tokens},
                              "max_length": {"training.max_length": 4096, "methods.fpa.training.max_length": tokens + 1}}


def test_a_hub_models_sampling_waits_for_its_check_and_a_toy_models_does_not():
    hub = judge([ROOT / "config" / "paper.yaml"])
    model = next(iter(hub.config["models"]))
    assert hub.dataset.prompt_budget(SimpleNamespace(model=model)) == [f"results/datasets/{model}/prompt_budget.json"]
    settings = json.loads(hub.dataset.prompt_budget_config(SimpleNamespace(model=model)))["max_length"]
    assert ["training.max_length", hub.config["training"]["max_length"]] in settings
    toy = judge([ROOT / "config" / "config.yaml"])
    assert toy.dataset.prompt_budget(SimpleNamespace(model="toy")) == []


def _planned(workdir: Path, target: str) -> dict[str, list[str]]:
    """``snakemake -n`` of the paper config toward ``target`` in ``workdir``: {rule: its jobs' outputs}."""
    done = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir), "-n",
                           target, "--configfile", str(ROOT / "config" / "paper.yaml")], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    planned: dict[str, list[str]] = {}
    for rule, outputs in re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    output: (.*)$", done.stdout, re.M):
        planned.setdefault(rule, []).extend(outputs.split(", "))
    return planned


def test_newer_problems_re_sample_a_hub_model_whose_check_re_runs_too(tmp_path):
    """The check is a plain input of sampling: marked ``ancient``, a check that re-runs hid sampling's own
    reason to re-run (problems newer than its samples), as it hides every job below it (snakemake#4166)."""
    model = next(iter(judge([ROOT / "config" / "paper.yaml"]).config["models"]))
    samples = f"results/datasets/{model}/samples.jsonl"
    planned = _planned(tmp_path, samples)
    order = ["fetch_data", "fetch_model", "math_train_problems", "check_prompt_budget", "sample_offline"]
    assert sorted(planned) == sorted(order), planned
    for age, rule in enumerate(order):  # every output, each stage newer than the one before
        for output in planned[rule]:
            path = tmp_path / output
            if rule == "fetch_model":  # a directory (planning reads its config.json where there is one)
                path.mkdir(parents=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("x")
            os.utime(path, (1_000_000 + age, 1_000_000 + age))
    assert _planned(tmp_path, samples) == {}
    os.utime(tmp_path / "results" / "problems" / "train.jsonl", (1_000_010, 1_000_010))
    assert sorted(_planned(tmp_path, samples)) == ["check_prompt_budget", "sample_offline"]
