"""Prompt templates. ``{problem}`` is replaced literally, so LaTeX braces elsewhere in
the template (the paper's ``\\boxed{X}``) need no escaping."""

from __future__ import annotations

PLACEHOLDER = "{problem}"

#: The paper's prompt (appendix "Prompts"), used for the real math experiments.
PAPER_MATH_TEMPLATE = (
    "Solve this math problem step by step. At the end, make sure to finish the calculation and state "
    "the answer exactly once in the following format:\nThe final answer is \\boxed{X}, where X is your "
    "final answer.\n\nQ: {problem}\n\nA:"
)


def render_prompt(template: str, problem: str) -> str:
    if PLACEHOLDER not in template:
        raise ValueError(f"prompt_template: expected a {PLACEHOLDER} field, got {template!r}")
    return template.replace(PLACEHOLDER, problem)


def build_prompts(template: str, problems: list[str], *, chat_tokenizer=None) -> list[str]:
    """Render each problem; with ``chat_tokenizer`` wrap it as one user turn of its chat template."""
    rendered = [render_prompt(template, problem) for problem in problems]
    if chat_tokenizer is None:
        return rendered
    return [chat_tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                               add_generation_prompt=True) for text in rendered]
