"""Each training prompt leaves a completion token within every ``max_length`` that will encode it.

A prompt as long as ``training.max_length`` fails in the reference cache and in training
(``fpa.samples.tokenize.encode_sample``), after hours of sampling. A toy model's prompts are counted by
the judge from the config alone (``fpa.config.feasible``); a hub model's need its tokenizer and the
problems, so its ``check_prompt_budget`` job counts them before the model samples anything.
"""

from __future__ import annotations

from typing import Sequence

from fpa.errors import ConfigError
from fpa.samples.tokenize import prompt_token_ids


def longest_prompt(tokenizer, problem_ids: Sequence[str], prompts: Sequence[str]) -> tuple[str, int]:
    """(problem id, tokens) of the longest prompt."""
    counts = ((len(prompt_token_ids(tokenizer, prompt)), problem_id) for problem_id, prompt in zip(problem_ids, prompts))
    tokens, problem_id = max(counts, key=lambda count: count[0])
    return problem_id, tokens


def check_prompt_budget(model: str, longest: tuple[str, int], settings: Sequence[tuple[str, int]]) -> None:
    """``ConfigError`` naming the key of the first ``(key, max_length)`` the longest prompt fills."""
    problem_id, tokens = longest
    for key, max_length in settings:
        if max_length <= tokens:
            raise ConfigError(f"{key}: expected more than the {tokens} tokens of the longest training prompt of model "
                              f"{model!r} (problem {problem_id!r}; a prompt must leave a completion token), got "
                              f"{max_length}")
