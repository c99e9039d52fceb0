"""The toy task: chains of single-digit additions and subtractions.

A problem is ``"3+4-2+7-1+5"``: operands 1-9 whose partial sums never go
negative. Its trajectory writes every partial sum and ends in a boxed answer::

    3+4=7. 7-2=5. 5+7=12. 12-1=11. 11+5=16. The final answer is \\boxed{16}

``render_trace`` injects *slips*: with probability ``slip_rate`` per step the
written partial sum is off by a small nonzero amount, and the wrong value is
carried forward. The running error never cancels back to zero, so a trace is
correct exactly when it has no slip. A model fine-tuned on such traces makes
the same kind of mistakes, which leaves room for offline RL to remove them.

A trace style (``TRACE_STYLES``) sets how each step and the ending are written. ``plain``
writes them one way; ``varied`` draws each step's surface form (a leading word, spacing, the
closing mark) and the ending's phrase from fixed, uneven weights; ``marks`` draws a one-character
mark before and after every step, so no choice moves an operand. Those choices never change
the answer, so correct and incorrect traces share tokens that carry probability mass
(docs/toy.md, "The regime").

Splits are a hash partition of the problem text (``split_of``), so problems of
different splits never overlap, whatever seeds or sizes are asked for.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass

SOURCE = "toy-arith"
# Short on purpose: tokens are characters. Rendered by fpa.samples.prompts.render_prompt.
DEFAULT_PROMPT_TEMPLATE = "Q: {problem}\nA:"
# Buckets of sha256(problem) % 100. "sft" trains the toy base model; the offline
# RL data, model selection and evaluation use "train", "validation" and "test".
SPLITS = {"test": range(0, 10), "validation": range(10, 20), "train": range(20, 60), "sft": range(60, 100)}
SLIP_DELTAS = (-2, -1, 1, 2)


@dataclass(frozen=True)
class TraceStyle:
    """How a trace is written: each field is ``((text, weight), ...)``, one choice drawn per step
    (``lead``, ``spacing``, ``close``) or per trace (``ending``); ``spacing`` is the text around the
    operator and the equals sign. ``coda`` is a sentence after the last step, one such field per
    word, drawn word by word: filler after the arithmetic, where it cannot move a step."""

    lead: tuple[tuple[str, float], ...] = (("", 1.0),)
    spacing: tuple[tuple[str, float], ...] = (("", 1.0),)
    close: tuple[tuple[str, float], ...] = ((".", 1.0),)
    ending: tuple[tuple[str, float], ...] = (("The final answer is", 1.0),)
    coda: tuple[tuple[tuple[str, float], ...], ...] = ()


def _marks(characters: str) -> tuple[tuple[str, float], ...]:
    """The first character with weight 0.6, the others sharing the rest evenly."""
    rare = 0.4 / (len(characters) - 1)
    return tuple((mark, 0.6 if i == 0 else rare) for i, mark in enumerate(characters))


TRACE_STYLES = {
    "plain": TraceStyle(),
    # one dominant form per choice and rarer ones: the base model learns uneven distributions, which
    # sampling at T < 1 sharpens alike in correct and incorrect traces
    "varied": TraceStyle(lead=(("", 0.7), ("then ", 0.1), ("so ", 0.1), ("now ", 0.1)),
                         spacing=(("", 0.7), (" ", 0.3)),
                         close=((".", 0.8), (";", 0.2)),
                         ending=(("The final answer is", 0.7), ("So the answer is", 0.15), ("Answer:", 0.15))),
    # as varied, each choice's dominant form likelier and its rare ones more numerous: sampling at T < 1
    # sharpens it more, and its rare forms add less noise
    "peaked": TraceStyle(lead=(("", 0.8), ("then ", 0.05), ("so ", 0.05), ("now ", 0.05), ("next ", 0.05)),
                         spacing=(("", 0.8), (" ", 0.2)),
                         close=((".", 0.8), (";", 0.05), (",", 0.05), ("!", 0.05), (":", 0.05)),
                         ending=(("The final answer is", 0.8), ("So the answer is", 0.05), ("Answer:", 0.05),
                                 ("Thus", 0.05), ("Result:", 0.05))),
    # today's steps, then a closing sentence of uneven word choices and varied's ending
    "coda": TraceStyle(ending=(("The final answer is", 0.7), ("So the answer is", 0.15), ("Answer:", 0.15)),
                       coda=tuple(tuple(zip(words, (0.7, 0.1, 0.1, 0.1))) for words in (
                           ("All", "Each", "Every", "The"), (" steps", " sums", " terms", " lines"),
                           (" are", " look", " seem", " were"), (" done", " added", " fine", " right"),
                           (" now", " here", " so", " then"), (".", "!", ";", ",")))),
    # one character before and after every step, a dominant mark and eight rare ones: every step is
    # plain's plus two characters, so no choice moves an operand or a sum (varied's forms of uneven
    # length did), and each trace makes two such choices per step
    "marks": TraceStyle(lead=_marks(">*~#@&%^|"), close=_marks(".;,!:?'_`")),
}

_TERM = re.compile(r"([+-]?)(\d)")


def split_of(problem: str) -> str:
    """The split a problem belongs to, from the hash of its text."""
    bucket = int.from_bytes(hashlib.sha256(problem.encode()).digest()[:8], "big") % 100
    return next(name for name, buckets in SPLITS.items() if bucket in buckets)


def problem_id(problem: str) -> str:
    return "toy-" + hashlib.sha256(problem.encode()).hexdigest()[:12]


def parse_problem(problem: str) -> list[int]:
    """``"3+4-2"`` -> ``[3, 4, -2]``: signed operands, the first always positive."""
    terms = _TERM.findall(problem)
    if "".join(sign + digit for sign, digit in terms) != problem or not terms or terms[0][0]:
        raise ValueError(f"not a toy problem (single digits joined by + or -): {problem!r}")
    return [int(sign + digit) for sign, digit in terms]


def solve(problem: str) -> int:
    return sum(parse_problem(problem))


def random_problem(rng: random.Random, n_operands: int = 6) -> str:
    """Operands 1-9 joined by + or -, drawn uniformly among chains whose partial sums stay >= 0.

    Non-negative partial sums keep the toy learnable by a tiny model in minutes:
    most of its arithmetic mistakes were on negative numbers.
    """
    if n_operands < 2:
        raise ValueError(f"n_operands: expected >= 2, got {n_operands}")
    while True:
        operands = [rng.randint(1, 9)] + [rng.choice((1, -1)) * rng.randint(1, 9) for _ in range(n_operands - 1)]
        if all(sum(operands[:k]) >= 0 for k in range(2, n_operands + 1)):
            return str(operands[0]) + "".join(f"{o:+d}" for o in operands[1:])


def make_problems(n: int, seed: int, *, split: str = "test", n_operands: int = 6) -> list[dict]:
    """``n`` distinct problems of ``split`` as benchmark records, deterministic in (n, seed, split).

    Records are ``{"id", "problem", "answer", "source"}`` with the answer as a string.
    """
    if split not in SPLITS:
        raise ValueError(f"split: expected one of {sorted(SPLITS)}, got {split!r}")
    rng = random.Random(f"{SOURCE}/{split}/{seed}")
    problems: dict[str, None] = {}  # insertion-ordered set
    for attempt in range(100 * n + 10_000):
        if len(problems) == n:
            break
            raise ValueError(f"n={n}: split {split!r} has too few distinct {n_operands}-operand problems")
        problem = random_problem(rng, n_operands)
        if split_of(problem) == split:
            problems.setdefault(problem)
    if len(problems) < n:
        raise ValueError(f"n={n}: split {split!r} has too few distinct {n_operands}-operand problems")
    return [{"id": problem_id(p), "problem": p, "answer": str(solve(p)), "source": SOURCE} for p in problems]


def chain_lengths(n_operands: int, min_operands: int | None = None) -> range:
    """The chain lengths of problems spread over ``min_operands..n_operands`` operands (None: all
    ``n_operands``); a ``ValueError`` naming ``min_operands`` when that range is empty or starts below 2."""
    if min_operands is not None and not 2 <= min_operands <= n_operands:
        raise ValueError(f"min_operands: expected 2 <= min_operands <= n_operands = {n_operands}, got {min_operands}")
    return range(min_operands or n_operands, n_operands + 1)


def make_mixed_problems(n: int, seed: int, *, split: str, lengths: range) -> list[dict]:
    """``n`` problems of ``split`` spread evenly over the chain ``lengths`` (as many of each, rounded up)."""
    per_length = -(-n // len(lengths))
    return [record for n_operands in lengths
            for record in make_problems(per_length, seed, split=split, n_operands=n_operands)]


def check_trace_style(style: str) -> None:
    """Refuse a ``trace_style`` that is not a key of ``TRACE_STYLES``."""
    if style not in TRACE_STYLES:
        raise ValueError(f"trace_style: expected one of {sorted(TRACE_STYLES)}, got {style!r}")


def render_trace(problem: str, rng: random.Random, slip_rate: float = 0.0, style: str = "plain") -> str:
    """The step-by-step solution of ``problem``; each step slips with probability ``slip_rate``.

    A slip adds a delta from ``SLIP_DELTAS`` to the written partial sum and the
    trace continues from the wrong value. Deltas that would bring the running
    error back to zero are excluded, so the final answer is wrong iff a slip occurred.
    ``style`` (a key of ``TRACE_STYLES``) draws the surface form of each step and of the ending.
    """
    if not 0.0 <= slip_rate <= 1.0:
        raise ValueError(f"slip_rate: expected a probability in [0, 1], got {slip_rate}")
    check_trace_style(style)
    forms = TRACE_STYLES[style]
    operands = parse_problem(problem)
    total, error, steps = operands[0], 0, []
    for operand in operands[1:]:
        written = total + error
        total += operand
        if rng.random() < slip_rate:
            error += rng.choice([d for d in SLIP_DELTAS if error + d != 0])
        sign = "+" if operand >= 0 else "-"
        lead, gap, close = (_draw(rng, choices) for choices in (forms.lead, forms.spacing, forms.close))
        steps.append(f"{lead}{written}{gap}{sign}{gap}{abs(operand)}{gap}={gap}{total + error}{close}")
    coda = "".join(" " * (i == 0) + _draw(rng, word) for i, word in enumerate(forms.coda))
    return " ".join(steps) + coda + f" {_draw(rng, forms.ending)} \\boxed{{{total + error}}}"


def _draw(rng: random.Random, choices: tuple[tuple[str, float], ...]) -> str:
    """One text of ``choices`` by its weight; a single choice draws nothing (``plain`` keeps its stream)."""
    if len(choices) == 1:
        return choices[0][0]
    texts, weights = zip(*choices)
    return rng.choices(texts, weights)[0]
