"""Resumable generation: an interrupted or killed job restarts from its finished shards
and returns exactly what an uninterrupted run returns; shards of another key are ignored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fpa.generation.backend import get_backend
from fpa.generation.shards import generate_sharded, remove_work
from fpa.io import read_jsonl, write_jsonl
from fpa.samples.prompts import render_prompt
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = [render_prompt(DEFAULT_PROMPT_TEMPLATE, r["problem"]) for r in make_problems(5, seed=3)]
# Repeated prompts, some across shard boundaries: their occurrences must count on over shards.
PROMPTS = [PROBLEMS[0], PROBLEMS[1], PROBLEMS[0], PROBLEMS[2], PROBLEMS[3], PROBLEMS[0], PROBLEMS[4], PROBLEMS[1]]
ARGS = dict(n=2, temperature=0.7, max_new_tokens=10, seed=7)
KEY = {"model": "sha-of-the-model", "code": "abc"}


class Interrupted(Exception):
    pass


class Counting:
    """Wraps a backend: counts the generate calls and raises after ``fail_after`` of them."""

    def __init__(self, backend, fail_after: int | None = None):
        self.backend, self.fail_after, self.calls = backend, fail_after, 0

    def generate(self, prompts, **kwargs):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise Interrupted
        self.calls += 1
        return self.backend.generate(prompts, **kwargs)


@pytest.fixture(scope="module")
def backend(micro_model_dir):
    return get_backend("hf", micro_model_dir, batch_size=4, threads=1)


@pytest.fixture(scope="module")
def uninterrupted(backend):
    return backend.generate(PROMPTS, **ARGS)


def _sharded(backend, work, **overrides):
    options = dict(ARGS, work_dir=work, key_parts=KEY, shard_rows=4)  # 2 prompts x n=2 per shard
    options.update(overrides)
    return generate_sharded(backend, PROMPTS, **options)


def test_sharded_equals_one_call(backend, uninterrupted, tmp_path):
    counting = Counting(backend)
    assert _sharded(counting, tmp_path / "work") == uninterrupted
    assert counting.calls == 4
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == [
        "manifest.json", "shard-00000.json", "shard-00001.json", "shard-00002.json", "shard-00003.json"]
    assert _sharded(backend, None) == uninterrupted  # no work directory: one plain call


def test_interrupted_run_resumes_from_finished_shards(backend, uninterrupted, tmp_path, caplog):
    work = tmp_path / "work"
    with pytest.raises(Interrupted):
        _sharded(Counting(backend, fail_after=2), work)
    assert len(list(work.glob("shard-*.json"))) == 2
    resumed = Counting(backend)
    with caplog.at_level("INFO", logger="fpa.generation.shards"):
        assert _sharded(resumed, work) == uninterrupted
    assert resumed.calls == 2  # only the two missing shards
    assert "resumed 2 of 4 shards" in caplog.text


@pytest.mark.parametrize("change", [{"seed": 8}, {"max_new_tokens": 9}, {"key_parts": {**KEY, "model": "other"}},
                                    {"shard_rows": 6}])
def test_shards_of_another_key_are_ignored(backend, tmp_path, change):
    work = tmp_path / "work"
    with pytest.raises(Interrupted):
        _sharded(Counting(backend, fail_after=2), work)
    counting = Counting(backend)
    out = _sharded(counting, work, **change)
    sampling = {key: change.get(key, value) for key, value in ARGS.items()}
    assert out == backend.generate(PROMPTS, **sampling)
    assert counting.calls == len(list(work.glob("shard-*.json")))  # every shard generated anew


def test_a_corrupt_or_foreign_shard_is_generated_again(backend, uninterrupted, tmp_path):
    work = tmp_path / "work"
    _sharded(Counting(backend), work)
    (work / "shard-00001.json").write_text("{not json")
    shard = json.loads((work / "shard-00002.json").read_text())
    (work / "shard-00002.json").write_text(json.dumps({**shard, "key": "0" * 64}))
    counting = Counting(backend)
    assert _sharded(counting, work) == uninterrupted
    assert counting.calls == 2


def test_remove_work_removes_an_emptied_work_parent(tmp_path):
    for bench in ("a", "b"):
        (tmp_path / "work" / bench).mkdir(parents=True)
        (tmp_path / "work" / bench / "shard-00000.json").write_text("{}")
    remove_work(tmp_path / "work" / "a")
    assert (tmp_path / "work").is_dir() and not (tmp_path / "work" / "a").exists()
    remove_work(tmp_path / "work" / "b")
    assert not (tmp_path / "work").exists()


def _sample_command(model_dir, problems, out, work, *extra):
    config = {"dataset": {"k": 2, "temperature": 0.7, "seed": 3}, "prompt_template": DEFAULT_PROMPT_TEMPLATE,
              "generation": {"backend": "hf", "stop": [], "batch_size": 8, "max_new_tokens": 40},
              "chat_template": False}
    return [sys.executable, "-m", "fpa", "sample", "--model", str(model_dir), "--problems", str(problems),
            "--config-json", json.dumps(config), "--code", "test", "--threads", "1", "--out", str(out),
            *(["--work", str(work), "--shard-rows", "2"] if work else []), *extra]


@pytest.mark.slow  # three `fpa sample` processes, one killed
def test_killed_sample_job_restarts_from_its_shards(micro_model_dir, tmp_path):
    """``fpa sample`` killed with SIGKILL after its first shard; the re-run finishes the rest."""
    problems = tmp_path / "problems.jsonl"
    write_jsonl(problems, make_problems(60, seed=5, split="train"))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out, work = tmp_path / "samples.jsonl", tmp_path / "work" / "samples"
    process = subprocess.Popen(_sample_command(micro_model_dir, problems, out, work), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 300
    while not (work / "shard-00000.json").exists():
        assert process.poll() is None, process.stdout.read()
        assert time.time() < deadline, "no shard appeared"
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=60)
    assert not out.exists()
    finished = len(list(work.glob("shard-*.json")))
    assert 1 <= finished < 60

    rerun = subprocess.run(_sample_command(micro_model_dir, problems, out, work), env=env, capture_output=True,
                           text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert f"resumed {finished} of 60 shards" in rerun.stderr
    assert not work.parent.exists()  # removed once the output is written

    plain = tmp_path / "plain.jsonl"
    once = subprocess.run(_sample_command(micro_model_dir, problems, plain, None), env=env, capture_output=True,
                          text=True, timeout=600)
    assert once.returncode == 0, once.stdout + once.stderr
    assert read_jsonl(out) == read_jsonl(plain)


def _evaluate(model_dir, benchmarks, n_of, tmp_path):
    """``fpa evaluate`` of one checkpoint on ``benchmarks`` (name -> records file), each with ``n_of[name]``."""
    config = {"benchmarks": {name: {"source": "file", "path": str(path), "n": n_of[name], "grader": "toy"}
                             for name, path in benchmarks.items()},
              "prompt_template": DEFAULT_PROMPT_TEMPLATE, "chat_template": False,
              "generation": {"backend": "hf", "stop": [], "batch_size": 8, "max_new_tokens": 40, "temperature": 0.7}}
    command = [sys.executable, "-m", "fpa", "evaluate", "--model", str(model_dir), "--config-json",
               json.dumps(config), "--seed", "1", "--code", "test", "--threads", "1",
               "--work", str(tmp_path / "work"), "--shard-rows", "4"]
    for name, path in benchmarks.items():
        command += ["--benchmark", name, str(path), str(tmp_path / "eval" / f"{name}.json")]
    result = subprocess.run(command, env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    outputs = {name: json.loads((tmp_path / "eval" / f"{name}.json").read_text()) for name in benchmarks}
    for path in (tmp_path / "eval").iterdir():  # as Snakemake removes a re-run job's outputs
        path.unlink()
    return result.stderr, outputs


def test_evaluate_rerun_regenerates_only_the_changed_benchmark(micro_model_dir, tmp_path):
    """One ``fpa evaluate`` job samples every benchmark of a checkpoint. Changing one benchmark
    re-runs the job, but the others resume from their kept shards: the same results, and no
    model load at all once nothing is left to generate."""
    benchmarks = {}
    for name, seed in (("a", 1), ("b", 2)):
        benchmarks[name] = tmp_path / f"{name}.jsonl"
        write_jsonl(benchmarks[name], make_problems(6, seed=seed, split="test"))
    log, first = _evaluate(micro_model_dir, benchmarks, {"a": 2, "b": 2}, tmp_path)
    assert "loading" in log and "resumed" not in log

    log, second = _evaluate(micro_model_dir, benchmarks, {"a": 2, "b": 3}, tmp_path)
    assert f"resumed 3 of 3 shards from {tmp_path / 'work' / 'a'}" in log
    assert "work/b: shards of another key" in log and "loading" in log
    assert second["a"] == first["a"] and second["b"]["n"] == 3

    log, third = _evaluate(micro_model_dir, benchmarks, {"a": 2, "b": 3}, tmp_path)
    assert "loading" not in log and third == second
