"""Prompt templates. ``{problem}`` is replaced literally, so LaTeX braces elsewhere in
the template (the paper's ``\\boxed{X}``) need no escaping."""

from __future__ import annotations

import os

PLACEHOLDER = "{problem}"

#: The paper's prompt (appendix "Prompts"), used for the real math experiments.
PAPER_MATH_TEMPLATE = (
    "Solve this math problem step by step. At the end, make sure to finish the calculation and state "
    "the answer exactly once in the following format:\nThe final answer is \\boxed{X}, where X is your "
    "final answer.\n\nQ: {problem}\n\nA:"
)

#: the date a chat template writes into a prompt (``date_string``) unless the config pins another
#: (``models.<name>.chat_date``): Llama 3.2's template writes today's date (``strftime_now``) when
#: none is given, and falls back to this one where it cannot read the clock
CHAT_DATE = "26 Jul 2024"


def render_prompt(template: str, problem: str) -> str:
    if PLACEHOLDER not in template:
        raise ValueError(f"prompt_template: expected a {PLACEHOLDER} field, got {template!r}")
    return template.replace(PLACEHOLDER, problem)


def check_chat_template(model_dir: str | os.PathLike, where: str) -> None:
    """The tokenizer in ``model_dir`` has the chat template a ``chat_template: true`` model's prompts are
    wrapped in (``build_prompts``); the check of rule ``fetch_model``, before any job samples it."""
    from transformers import AutoTokenizer

    if AutoTokenizer.from_pretrained(model_dir).chat_template is None:
        raise ValueError(f"{where}: chat_template: its tokenizer has no chat template to wrap the prompts in; "
                         "expected false (the prompt_template alone), got true")


def build_prompts(template: str, problems: list[str], *, chat_tokenizer=None, chat_date: str = CHAT_DATE) -> list[str]:
    """Render each problem; with ``chat_tokenizer`` wrap it as one user turn of its chat template,
    dated ``chat_date`` (a template that writes a date reads ``date_string``; the others ignore it)."""
    rendered = [render_prompt(template, problem) for problem in problems]
    if chat_tokenizer is None:
        return rendered
    return [chat_tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                               add_generation_prompt=True, date_string=chat_date)
            for text in rendered]
