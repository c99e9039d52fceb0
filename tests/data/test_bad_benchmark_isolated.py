"""One broken benchmark fails alone in ``fpa evaluate`` (one model load per checkpoint): records
that cannot be graded fail the job before any generation, and a grader that fails on one
benchmark leaves the others graded and written, with every benchmark's completions kept."""

import json

import pytest

import fpa.cli.evaluate as evaluate_command
from fpa.cli import main
from fpa.grading import get_grader
from fpa.io import read_json, write_jsonl
from fpa.toy.model import build_toy_model
from fpa.toy.settings import ToyModelConfig
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "micro"
    build_toy_model(out, ToyModelConfig(n_train_problems=50, d_model=64, n_heads=1, n_layers=1, d_ff=64, steps=5,
                                        batch_size=8))
    return out


def _evaluate(model_dir, files: dict, tmp_path) -> None:
    config = {"benchmarks": {name: {"source": "file", "path": str(path), "n": 1, "grader": "toy"}
                             for name, path in files.items()},
              "prompt_template": DEFAULT_PROMPT_TEMPLATE, "chat_template": False,
              "generation": {"backend": "hf", "stop": [], "batch_size": 8, "max_new_tokens": 8, "temperature": 0.7}}
    command = ["evaluate", "--model", str(model_dir), "--config-json", json.dumps(config), "--seed", "1",
               "--work", str(tmp_path / "work")]
    for name, path in files.items():
        command += ["--benchmark", name, str(path), str(tmp_path / "eval" / f"{name}.json")]
    main(command)


def test_records_that_cannot_be_graded_fail_before_any_generation(model_dir, tmp_path, capsys):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    write_jsonl(good, make_problems(3, seed=1))
    write_jsonl(bad, [{k: v for k, v in row.items() if k != "answer"} for row in make_problems(3, seed=2)])
    with pytest.raises(SystemExit):
        _evaluate(model_dir, {"good": good, "bad": bad}, tmp_path)
    assert f"{bad}:1: field 'answer' is missing" in capsys.readouterr().err
    assert not (tmp_path / "work").exists() and not (tmp_path / "eval").exists()


def test_a_failing_grader_fails_its_benchmark_alone(model_dir, tmp_path, capsys, monkeypatch):
    def grader_refusing_boom(name):
        grade = get_grader(name)

        def checked(pairs):
            pairs = list(pairs)
            if any(gold == "boom" for _, gold in pairs):
                raise ValueError("gold 'boom' is not an integer")
            return grade(pairs)
        return checked

    monkeypatch.setattr(evaluate_command, "get_grader", grader_refusing_boom)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    write_jsonl(first, [{**row, "answer": "boom"} for row in make_problems(3, seed=1)])
    write_jsonl(second, make_problems(3, seed=2))
    with pytest.raises(SystemExit):
        _evaluate(model_dir, {"first": first, "second": second}, tmp_path)
    assert ("grading failed for 1 of 2 benchmarks: first (ValueError: gold 'boom' is not an integer)"
            in capsys.readouterr().err)
    assert not (tmp_path / "eval" / "first.json").exists()
    assert read_json(tmp_path / "eval" / "second.json")["n_problems"] == 3
    assert {path.name for path in (tmp_path / "work").iterdir()} == {"first", "second"}
