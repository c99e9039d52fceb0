"""Turning (prompt, completion) into model inputs, identically everywhere.

The reference cache, the trainer and the online reference all call
``encode_sample`` (``encode_record`` for dataset records), so token positions line up by
construction.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EncodedSample:
    """``input_ids`` = prompt + completion (+ eos); ``prompt_len`` tokens belong to the prompt.

    Completion tokens are ``input_ids[prompt_len:]``; the hidden state that predicts
    token ``i`` sits at position ``i - 1``.
    """

    input_ids: list[int]
    prompt_len: int

    @property
    def completion_len(self) -> int:
        return len(self.input_ids) - self.prompt_len


def prompt_token_ids(tokenizer, prompt: str) -> list[int]:
    """A prompt's tokens as every model input begins with them (no special tokens added)."""
    return tokenizer(prompt, add_special_tokens=False)["input_ids"]


def encode_sample(tokenizer, prompt: str, completion: str, max_length: int, *,
                  ends_answer: bool = True) -> EncodedSample:
    """``ends_answer``: the completion ends the answer, so EOS follows it (a step-level sample,
    e.g. Step-DPO's next step, does not: its EOS would teach stopping after that step)."""
    prompt_ids = prompt_token_ids(tokenizer, prompt)
    completion_ids = tokenizer(completion, add_special_tokens=False)["input_ids"]
    if ends_answer and tokenizer.eos_token_id is not None:
        completion_ids = completion_ids + [tokenizer.eos_token_id]
    if not prompt_ids:
        raise ValueError(f"empty prompt after tokenisation: {prompt!r}")
    ids = (prompt_ids + completion_ids)[:max_length]
    if len(ids) <= len(prompt_ids):
        raise ValueError(f"prompt of {len(prompt_ids)} tokens leaves no completion within max_length={max_length} "
                         f"(training.max_length: expected more than the longest prompt's tokens)")
    return EncodedSample(ids, len(prompt_ids))


def encode_record(tokenizer, sample: dict, max_length: int) -> EncodedSample:
    """An offline-dataset record; ``ends_answer: false`` (step-level samples) and ``finish_reason:
    length`` (a sample cut at the generation limit, which the model did not end) leave out EOS."""
    ends = sample.get("ends_answer", True) and sample.get("finish_reason") != "length"
    return encode_sample(tokenizer, sample["prompt"], sample["completion"], max_length, ends_answer=ends)
