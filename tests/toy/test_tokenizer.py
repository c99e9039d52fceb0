import random

from transformers import AutoTokenizer, Qwen2Config

from fpa.samples.prompts import render_prompt
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems, render_trace
from fpa.toy.tokenizer import EOS, PAD, build_tokenizer, save_tokenizer, token_count


def test_round_trip_is_exact():
    tokenizer = build_tokenizer()
    rng = random.Random(0)
    texts = ["  two  spaces,\nnew line\n", "a\\boxed{-3}\t", "", "non-ASCII: é, ≥"]
    for record in make_problems(20, seed=0):
        texts.append(render_prompt(DEFAULT_PROMPT_TEMPLATE, record["problem"]) + render_trace(record["problem"], rng, 0.5))
    for text in texts:
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        assert len(ids) == len(text.encode())  # one token per byte: per character for ASCII
        assert tokenizer.decode(ids) == text
        assert tokenizer.decode(ids + [tokenizer.eos_token_id], skip_special_tokens=True) == text


def test_special_tokens():
    tokenizer = build_tokenizer()
    assert (tokenizer.pad_token, tokenizer.eos_token) == (PAD, EOS)
    assert (tokenizer.pad_token_id, tokenizer.eos_token_id) == (0, 1)
    assert tokenizer("A", add_special_tokens=False)["input_ids"] == [ord("A") + 2]


def test_auto_tokenizer_loads_the_saved_tokenizer(tmp_path):
    text = "Q: 1+2\nA: 1+2=3. The final answer is \\boxed{3}"
    ids = save_tokenizer(tmp_path)(text, add_special_tokens=False)["input_ids"]
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded(text, add_special_tokens=False)["input_ids"] == ids
    assert loaded.decode(ids) == text
    assert loaded.eos_token == EOS and loaded.padding_side == "left"


def test_auto_tokenizer_in_a_qwen2_model_dir_keeps_spaces(tmp_path):
    # config.json says qwen2, so AutoTokenizer picks Qwen2Tokenizer with its own ByteLevel pipeline.
    text = "Q: 1+2\nA: 1+2=3.  done"
    ids = save_tokenizer(tmp_path)(text, add_special_tokens=False)["input_ids"]
    Qwen2Config(vocab_size=258).save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert loaded(text, add_special_tokens=False)["input_ids"] == ids
    assert loaded.decode(ids + [loaded.eos_token_id], skip_special_tokens=True) == text


def test_token_count_is_the_tokenizers_count_without_loading_it():
    """``token_count`` (what fpa check-config counts a toy prompt with) agrees with the tokenizer on
    ASCII, non-ASCII, decomposed (NFC-normalised) text and special tokens written in the text."""
    tokenizer = build_tokenizer()
    for text in ["Q: 1+2-3\nA:", "", "non-ASCII: é, ≥ \U0001F600", "e\u0301 composed", f"x{EOS}y{PAD}{PAD}", f"<|{EOS}"]:
        assert token_count(text) == len(tokenizer(text, add_special_tokens=False)["input_ids"]), text
