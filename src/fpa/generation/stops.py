"""Where a completion ends, as the paper's evaluation harness ends it, and why it ended.

The paper evaluates with Qwen2.5-Math's harness (github.com/QwenLM/Qwen2.5-Math,
``evaluation/math_eval.py``). For a base model's prompt it stops generation at the stop words
``["</s>", "<|im_end|>", "<|endoftext|>"]`` plus the prompt type's next-question marker (for its
``cot`` prompt ``"Question: {input}\\nAnswer: "``, ``"\\n\\nQuestion:"``), passes ``stop_token_ids``
``[151645, 151643]`` (``<|im_end|>``, ``<|endoftext|>``) for Qwen2 models, and cuts the output at
the first occurrence of any stop word (``code.split(stop_word)[0]``) before grading. Here:

  * the stop words are ``generation.stop`` (the schema's default: the harness's three) and the
    next-question marker derived from the model's own prompt template (``question_stop``:
    ``"Q: {problem}\\n\\nA:"`` gives ``"\\n\\nQ:"``), for sampling the offline set and evaluation;
  * a stop word that is one added token of the tokenizer (``<|im_end|>`` in Qwen's vocabulary)
    stops generation as a token, as the harness's ``stop_token_ids`` do: decoded with special
    tokens skipped it would never appear in the text;
  * the text is cut before the first stop word (``cut_at_stop``) in every backend, and every
    completion records why it ended: ``finish_reason`` "stop" (with the stop word or token that
    ended it) or "length" (the max_new_tokens limit, where training must not append EOS).

The harness also strips the output's surrounding whitespace; the completion here keeps it, as it
is the training target after the prompt (the graders ignore it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from fpa.samples.prompts import PLACEHOLDER

STOP, LENGTH = "stop", "length"


@dataclass(frozen=True)
class Completion:
    """One sampled completion: its text (prompt, stop word and EOS excluded) and why it ended."""

    text: str
    finish_reason: str  # STOP or LENGTH
    stop: str | None = None  # the stop word or token that ended it (None at the length limit)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, raw: dict) -> "Completion":
        return cls(raw["text"], raw["finish_reason"], raw.get("stop"))


def question_stop(template: str) -> str | None:
    """The next-question marker of a prompt template: a blank line, then the text its problem's
    line has before ``{problem}`` (``"Q: {problem}\\n\\nA:"`` -> ``"\\n\\nQ:"``, as the harness's
    ``"Question: {input}"`` gives ``"\\n\\nQuestion:"``); None when the problem starts its line."""
    before = template.split(PLACEHOLDER, 1)[0].rsplit("\n", 1)[-1].rstrip()
    return f"\n\n{before}" if before else None


def stop_words(template: str, configured: Sequence[str]) -> list[str]:
    """``generation.stop`` and the template's next-question marker, each once, in that order."""
    marker = question_stop(template)
    return list(dict.fromkeys([*configured, *([marker] if marker else [])]))


def stop_token_ids(tokenizer, words: Sequence[str]) -> set[int]:
    """The ids of the stop words that are one added (special) token of ``tokenizer``."""
    added = tokenizer.get_added_vocab()
    return {added[word] for word in words if word in added}


def cut_at_stop(text: str, words: Sequence[str]) -> tuple[str, str | None]:
    """``text`` before the first occurrence of any stop word, and that word (None: none occurs)."""
    found = [(index, word) for word in words if (index := text.find(word)) >= 0]
    if not found:
        return text, None
    index, word = min(found)
    return text[:index], word


def finish(tokenizer, ids: Sequence[int], stop_ids: set[int], words: Sequence[str]) -> Completion:
    """The completion of generated token ``ids``: cut before the first stop id, decoded (special
    tokens skipped, as both backends decode), then cut before the first stop word."""
    ids = list(ids)
    end = next((i for i, token in enumerate(ids) if token in stop_ids), None)
    text, word = cut_at_stop(tokenizer.decode(ids[:end], skip_special_tokens=True), words)
    if word is not None:
        return Completion(text, STOP, word)
    if end is not None:
        return Completion(text, STOP, tokenizer.convert_ids_to_tokens(ids[end]))
    return Completion(text, LENGTH)


def completion_fields(completions: Sequence[Sequence[Completion]]) -> dict:
    """How an output file keeps completions, per prompt: ``completions`` (texts), ``finish_reasons``
    and ``stops`` (``read_completions`` reads them back)."""
    return {"completions": [[c.text for c in row] for row in completions],
            "finish_reasons": [[c.finish_reason for c in row] for row in completions],
            "stops": [[c.stop for c in row] for row in completions]}


def read_completions(fields: dict, where: str) -> list[list[Completion]]:
    """The completions of ``completion_fields``; a file without finish reasons is named."""
    if "finish_reasons" not in fields:
        raise ValueError(f"{where}: no finish_reasons beside the completions (written before they were "
                         "recorded); generate it again")
    return [[Completion(text, reason, stop) for text, reason, stop in zip(*rows, strict=True)]
            for rows in zip(fields["completions"], fields["finish_reasons"], fields["stops"], strict=True)]
