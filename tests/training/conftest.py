"""Tiny Qwen2 model and character tokenizer, saved the way a real checkpoint is."""

from __future__ import annotations

import pytest
import torch

CHARS = "abcdefghijklmnopqrstuvwxyz0123456789 +-*/=().,?!"


def make_tokenizer():
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[PAD]": 0, "[EOS]": 1, "[UNK]": 2, **{ch: i + 3 for i, ch in enumerate(CHARS)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="[PAD]", eos_token="[EOS]", unk_token="[UNK]")


def make_model(tie: bool = False, seed: int = 0):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=97, hidden_size=64, num_hidden_layers=2, num_attention_heads=1,
                         num_key_value_heads=1, head_dim=64, intermediate_size=128, tie_word_embeddings=tie)
    return Qwen2ForCausalLM(config).eval()


@pytest.fixture(scope="session")
def tiny_tokenizer():
    return make_tokenizer()


@pytest.fixture(scope="session", params=[False, True], ids=["untied", "tied"])
def tiny_model_dir(request, tmp_path_factory, tiny_tokenizer):
    """Directory with config, weights and tokenizer of a random tiny Qwen2 (untied and tied heads)."""
    path = tmp_path_factory.mktemp("tied" if request.param else "untied")
    make_model(tie=request.param).save_pretrained(path)
    tiny_tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def tiny_samples():
    return [
        {"id": f"s{i}", "prompt": prompt, "completion": completion}
        for i, (prompt, completion) in enumerate([
            ("what is 2+3? ", "2+3=5. answer 5"),
            ("q: 7*6 ", "42"),
            ("solve x-1=0. ", "x=1, so the answer is 1."),
            ("hi ", "hello there, how are you?"),
            ("(1+1)*2 = ", "4"),
        ])
    ]
