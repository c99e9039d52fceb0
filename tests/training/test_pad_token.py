"""A tokenizer without a pad token (Llama-3.2-Instruct's) trains, caches and generates: one pad id for all."""

from __future__ import annotations

import shutil

import pytest
from transformers import AutoTokenizer

from fpa.io import read_jsonl
from fpa.samples.pad_token import pad_token_id
from fpa.training.loop import train

TRAINING = {"lr": 1e-3, "warmup_steps": 1, "epochs": 1, "batch_problems": 4, "micro_batch_problems": 2,
            "max_length": 128, "eval_every": 2, "checkpoint_every": 100, "chunk_size": 64}


@pytest.fixture(scope="module")
def no_pad_model_dir(tmp_path_factory, toy_model_dir):
    """The toy model whose tokenizer, like Llama-3.2-Instruct's, sets no pad token."""
    directory = tmp_path_factory.mktemp("no-pad")
    shutil.copytree(toy_model_dir, directory, dirs_exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    tokenizer.pad_token = None
    tokenizer.save_pretrained(directory)
    assert AutoTokenizer.from_pretrained(directory).pad_token_id is None
    return directory


def test_the_pad_id_is_the_pad_token_else_eos(no_pad_model_dir, toy_model_dir):
    no_pad = AutoTokenizer.from_pretrained(no_pad_model_dir)
    assert pad_token_id(no_pad) == no_pad.eos_token_id
    padded = AutoTokenizer.from_pretrained(toy_model_dir)
    assert pad_token_id(padded) == padded.pad_token_id != padded.eos_token_id
    no_pad.eos_token = None
    with pytest.raises(ValueError, match="expected a pad or an EOS token"):
        pad_token_id(no_pad)


def test_training_with_a_tokenizer_without_pad_token(tmp_path, no_pad_model_dir, tiny_dataset):
    summary = train(model_dir=str(no_pad_model_dir), train_path=str(tiny_dataset / "train.jsonl"),
                    val_path=str(tiny_dataset / "val.jsonl"), reference_dir=None, objective_name="offrl",
                    params={}, training=TRAINING, seed=3, work_dir=str(tmp_path / "work"), out_dir=str(tmp_path / "out"))
    assert summary["steps"] == summary["total_steps"] > 0


def test_reference_cache_and_generation_with_a_tokenizer_without_pad_token(tmp_path, no_pad_model_dir, tiny_dataset):
    from fpa.generation.hf import HFBackend
    from fpa.reference.cache import write_reference_cache

    samples = read_jsonl(tiny_dataset / "train.jsonl")[:3]
    tokenizer = AutoTokenizer.from_pretrained(no_pad_model_dir)
    manifest = write_reference_cache(no_pad_model_dir, samples, tokenizer, tmp_path / "cache", max_length=128)
    assert manifest["num_samples"] == 3
    texts = HFBackend(str(no_pad_model_dir), batch_size=2).generate(["1+2=", "3+4+5="], n=2, temperature=1.0,
                                                                 max_new_tokens=4, seed=0)
    assert [len(row) for row in texts] == [2, 2]
