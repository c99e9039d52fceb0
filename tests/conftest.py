"""Shared fixtures: a tiny random Qwen2 model with the toy tokenizer, and a tiny
offline dataset of mixed correct/incorrect groups, both built in seconds."""

from __future__ import annotations

import os
import random
from pathlib import Path

from fpa.cli.entry import set_job_environment  # imports no torch

# Before torch loads its OpenMP runtime, and inherited by every job a test starts: the environment every
# fpa job sets itself (its OpenMP wait policy), for the tests that run torch in their own process: the two
# xdist workers each run 2-thread jobs on 2 cores, and under OpenMP's default policy a waiting thread
# spins on a core the other worker needs; a passive one sleeps (docs/testing.md; measured:
# docs/archive/benchmarks.md). Results do not depend on it.
set_job_environment()

import pytest  # noqa: E402
import torch  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM  # noqa: E402

from fpa.io import write_jsonl  # noqa: E402
from fpa.toy.task import make_problems, render_trace  # noqa: E402
from fpa.toy.tokenizer import build_tokenizer  # noqa: E402

# fast_tier: the CPU budget of each test not marked slow; schedule: how pytest-xdist spreads the tests;
# pytester: the tests of that guard
pytest_plugins = ["fast_tier", "schedule", "pytester"]


TINY_ARCHITECTURES = {"qwen2": (Qwen2Config, Qwen2ForCausalLM), "qwen3": (Qwen3Config, Qwen3ForCausalLM)}


def build_tiny_model(directory, seed: int = 0, architecture: str = "qwen2", **widths) -> None:
    """A random tiny causal LM with the toy tokenizer, saved as a hub checkpoint is; ``widths`` replace the
    default 2-layer, one-head, tied shape."""
    tokenizer = build_tokenizer()
    torch.manual_seed(seed)
    config_class, model_class = TINY_ARCHITECTURES[architecture]
    shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=1,
                 num_key_value_heads=1, head_dim=64, tie_word_embeddings=True) | widths
    config = config_class(vocab_size=len(tokenizer), max_position_embeddings=256, eos_token_id=tokenizer.eos_token_id,
                          pad_token_id=tokenizer.pad_token_id, **shape)
    model_class(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)


@pytest.fixture(scope="session")
def tiny_model_builder():
    """``build_tiny_model``, for a test that needs another architecture or shape."""
    return build_tiny_model


def tiny_samples(n_problems: int, k: int = 4, seed: int = 0) -> list[dict]:
    """``k`` samples per problem, half correct (no slip) and half incorrect (slip at every step)."""
    rng = random.Random(seed)
    samples = []
    for problem in make_problems(n_problems, seed, split="train"):
        for index in range(k):
            correct = index % 2 == 0
            completion = render_trace(problem["problem"], rng, slip_rate=0.0 if correct else 1.0)
            samples.append({"id": f"{problem['id']}/{index}", "problem_id": problem["id"], "sample_index": index,
                            "prompt": f"Q: {problem['problem']}\nA:", "completion": " " + completion,
                            "answer": problem["answer"], "correct": correct, "reward": 1.0 if correct else -1.0})
    return samples


@pytest.fixture(scope="session")
def gqa_model_dir(tmp_path_factory):
    """A random tiny Qwen3 with grouped K/V (4 query heads, 2 K/V heads) and the toy tokenizer."""
    directory = tmp_path_factory.mktemp("qwen3-gqa")
    build_tiny_model(directory, architecture="qwen3", num_hidden_layers=4, num_attention_heads=4,
                     num_key_value_heads=2, head_dim=16, tie_word_embeddings=False)
    return directory


@pytest.fixture(scope="session")
def toy_model_dir(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tiny-model")
    build_tiny_model(directory)
    return directory


@pytest.fixture(scope="session")
def tiny_dataset(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tiny-dataset")
    write_jsonl(directory / "train.jsonl", tiny_samples(8, seed=0))
    write_jsonl(directory / "val.jsonl", tiny_samples(2, seed=1))
    return directory


REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def mirror() -> Path:
    """The data mirror: $FPA_DATA_MIRROR, else ``shared/data`` beside the repository (required in CI)."""
    path = Path(os.environ.get("FPA_DATA_MIRROR", REPO_ROOT.parent / "shared" / "data"))
    if not (path / "MANIFEST.md").is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"data mirror not found at {path} (CI must have ../shared/data)")
        pytest.skip(f"data mirror not found at {path} (set FPA_DATA_MIRROR)")
    return path


@pytest.fixture(scope="session")
def tiny(mirror: Path) -> Path:
    return mirror / "tiny"
