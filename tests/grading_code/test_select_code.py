"""Model selection on a code dataset's validation problems: ``fpa select-checkpoint`` grades each
candidate's programs against the held-out problems' own tests in the real sandbox and links the
best. Generation is scripted per candidate (the programs are the test's, the model is not what is
tested); the validation records, the grading and the selection are the pipeline's own."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import fpa.evaluation.sampling
from fpa.cli import main
from fpa.grading.code.tests import build_code_train
from fpa.generation.stops import Completion
from fpa.io import read_json, read_jsonl, write_json, write_jsonl
from fpa.training.checkpoints import snapshot_name

MIRROR = Path(__file__).resolve().parents[1] / "fixtures" / "code" / "mirror"
# a stdin problem, a call-based one answered by a top-level function, a LeetCode-style class
RIGHT = {
    "taco_train/0": "```python\nprint(2 * int(input()))\n```",
    "taco_train/1": "def add(a, b):\n    return a + b\n",
    "taco_train/2": "class Solution:\n    def maxOf(self, nums: List[int]) -> int:\n        return max(nums)\n",
}
WRONG = {
    "taco_train/0": "print(int(input()) + 2)\n",
    "taco_train/1": "def add(a, b):\n    return a - b\n",
    "taco_train/2": "class Solution:\n    def maxOf(self, nums):\n        return min(nums)\n",
}
# what each candidate writes (n = 2 samples per problem): Pass@1 0, 1 and 1/2
STEPS = {2: (WRONG, WRONG), 4: (RIGHT, RIGHT), 6: (RIGHT, WRONG)}
FINAL_STEP = 6


class ScriptedBackend:
    """The programs of ``STEPS`` for the candidate in ``model_dir``; the prompt is the problem."""

    def __init__(self, model_dir: str, problem_ids: dict[str, str]):
        self.problem_ids = problem_ids
        self.load_weights(model_dir)

    def load_weights(self, model_dir: str) -> None:
        """The next candidate in the job's one engine (``fpa.generation.backend.Engine``)."""
        name = Path(model_dir).name
        self.samples = STEPS[FINAL_STEP if name == "checkpoint" else int(name.split("-")[1])]

    def generate(self, prompts, *, n, **_):
        assert n == len(self.samples)
        return [[Completion(programs[self.problem_ids[prompt]], "stop", "<eos>") for programs in self.samples]
                for prompt in prompts]


@pytest.fixture
def run_dir(tmp_path):
    """The held-out problems as the validation benchmark, a run's snapshots and final checkpoint."""
    problems, _ = build_code_train({"taco_train": MIRROR / "taco" / "train.jsonl",
                                    "apps_train": MIRROR / "apps" / "train.jsonl"})
    write_jsonl(tmp_path / "problems.jsonl", [problem.to_dict() for problem in problems])
    write_jsonl(tmp_path / "val.jsonl", [{"problem_id": pid, "sample_index": index} for pid in RIGHT for index in (0, 1)])
    main(["validation-benchmark", "--problems", str(tmp_path / "problems.jsonl"), "--val", str(tmp_path / "val.jsonl"),
          "--out", str(tmp_path / "bench.jsonl")])
    for step in (2, 4):
        (tmp_path / "snapshots" / snapshot_name(step)).mkdir(parents=True)
        (tmp_path / "snapshots" / snapshot_name(step) / "model.safetensors").write_bytes(b"step %d" % step)
    (tmp_path / "checkpoint").mkdir()
    (tmp_path / "checkpoint" / "model.safetensors").write_bytes(b"final")
    write_json(tmp_path / "checkpoint" / "training_state.json", {"summary": {"steps": FINAL_STEP}})
    return tmp_path


def test_validation_records_carry_the_problems_tests(run_dir):
    records = read_jsonl(run_dir / "bench.jsonl")
    assert [record["id"] for record in records] == list(RIGHT)
    for record in records:
        spec = json.loads(record["answer"])
        assert spec["testtype"] in ("stdin", "functional") and spec["tests"]


def test_select_checkpoint_grades_code_in_the_sandbox(run_dir, monkeypatch):
    problem_ids = {record["problem"]: record["id"] for record in read_jsonl(run_dir / "bench.jsonl")}
    monkeypatch.setattr(fpa.evaluation.sampling, "make_backend",
                        lambda generation, model_dir, gpus=1, **engine: ScriptedBackend(model_dir, problem_ids))
    config = {"generation": {"backend": "hf", "stop": [], "temperature": 0.7, "max_new_tokens": 64, "batch_size": 1},
              "prompt_template": "{problem}", "chat_template": False,
              "benchmarks": {"val": {"source": "validation", "n": 2, "grader": "code_tests"}}}
    main(["select-checkpoint", "--snapshots", str(run_dir / "snapshots"), "--checkpoint", str(run_dir / "checkpoint"),
          "--benchmark", "val", str(run_dir / "bench.jsonl"), "--config-json", json.dumps(config), "--seed", "42",
          "--work", str(run_dir / "select-work"), "--out", str(run_dir / "selected")])
    record = read_json(run_dir / "selected.prov.json")
    assert [(c["step"], c["pass_at_1"], c["n_problems"]) for c in record["candidates"]] == [
        (2, 0.0, 3), (4, 1.0, 3), (6, 0.5, 3)]
    assert record["selected"] == {"step": 4, "final_step": FINAL_STEP, "benchmark": "val", "pass_at_1": 1.0}
    assert record["sandbox"] == "bwrap" and record["sandbox_aggregate_bound"]
    assert os.path.samefile(run_dir / "snapshots" / snapshot_name(4) / "model.safetensors",
                            run_dir / "selected" / "model.safetensors")
