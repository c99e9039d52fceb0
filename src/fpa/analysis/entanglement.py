"""Gradient entanglement pilot (paper §2.2, Figure "Gradient entanglement across datasets",
appendix "Pilot Experiment Details"): for a (correct y_w, incorrect y_l) pair of one problem x,

    cos = ⟨g_w, g_l⟩ / (‖g_w‖·‖g_l‖),   g = ∇_θ log π_θ(y|x) over every trainable parameter,

and the two norms, at one model (the base). Long trajectories sharing most of their tokens
give aligned score functions (cos ≫ 0), which objectives that raise y_w and lower y_l turn
into opposed updates; the paper contrasts MATH with short-answer datasets. Here the
contrast is the same pairs cut down to their final answer (``\\boxed{…}`` only), so the
model, problems and answers stay fixed and only the trajectory changes.
"""

from __future__ import annotations

import random
from typing import Iterable, Sequence

import torch
from torch import Tensor

from fpa.analysis.hidden import completion_hidden
from fpa.grading.answers import last_boxed
from fpa.reference.model import reference_head_weight
from fpa.samples.offline import group_by_problem
from fpa.samples.tokenize import encode_sample
from fpa.training.head import token_statistics

VARIANTS = ("full", "answer_only")


def answer_only(completion: str) -> str | None:
    """The completion reduced to its final boxed answer (None: it has none)."""
    answer = last_boxed(completion)
    return None if answer is None else f"\\boxed{{{answer}}}"


def select_pairs(samples: Iterable[dict], *, max_pairs: int, seed: int) -> list[tuple[dict, dict]]:
    """One (correct, incorrect) pair per problem with both outcomes, problems and members drawn with ``seed``."""
    rng = random.Random(seed)
    pairs = []
    for problem_id, group in sorted(group_by_problem(samples).items()):
        correct = [s for s in group if s["correct"]]
        incorrect = [s for s in group if not s["correct"]]
        if correct and incorrect:
            pairs.append((rng.choice(correct), rng.choice(incorrect)))
    rng.shuffle(pairs)
    return pairs[:max_pairs]


def variant_pair(pair: tuple[dict, dict], variant: str) -> tuple[str, str] | None:
    """The pair's two completions under ``variant`` (None: not defined for this pair)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: expected one of {VARIANTS}, got {variant!r}")
    completions = tuple(s["completion"] for s in pair)
    if variant == "full":
        return completions
    short = tuple(answer_only(c) for c in completions)
    return None if None in short or short[0] == short[1] else short


def score_gradient(model, tokenizer, prompt: str, completion: str, max_length: int, *,
                   ends_answer: bool = True) -> tuple[Tensor, int]:
    """(∇_θ log π_θ(completion|prompt) flattened over trainable parameters, completion tokens);
    ``ends_answer``: EOS follows the completion (not after a single label token)."""
    encoded = encode_sample(tokenizer, prompt, completion, max_length, ends_answer=ends_answer)
    hidden, targets, _ = completion_hidden(model, [encoded])
    logp = token_statistics(hidden, reference_head_weight(model), targets).logp.sum()
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad(logp, params, allow_unused=True)
    flat = torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(grads, params)])
    return flat, encoded.completion_len


def pair_entanglement(model, tokenizer, prompt: str, completions: Sequence[str], max_length: int, *,
                      ends_answer: bool = True) -> dict:
    """Cosine of the two score functions, their norms and lengths (correct first)."""
    (g_w, len_w), (g_l, len_l) = (score_gradient(model, tokenizer, prompt, c, max_length, ends_answer=ends_answer)
                                  for c in completions)
    norm_w, norm_l = g_w.double().norm(), g_l.double().norm()
    cosine = (g_w.double() @ g_l.double()) / (norm_w * norm_l)
    return {"cosine": float(cosine), "norm_correct": float(norm_w), "norm_incorrect": float(norm_l),
            "tokens_correct": len_w, "tokens_incorrect": len_l}


def measure(model, tokenizer, pairs: Sequence[tuple[dict, dict]], *, max_length: int) -> list[dict]:
    """One row per (variant, pair): ``variant``, ``problem_id`` and ``pair_entanglement``'s fields."""
    rows = []
    for variant in VARIANTS:
        for pair in pairs:
            completions = variant_pair(pair, variant)
            if completions is not None:
                stats = pair_entanglement(model, tokenizer, pair[0]["prompt"], completions, max_length)
                rows.append({"variant": variant, "problem_id": pair[0]["problem_id"], **stats})
    return rows


def measure_preference(model, tokenizer, name: str, pairs: Sequence[tuple[dict, dict]], *,
                       max_length: int) -> list[dict]:
    """One row per (preferred, dispreferred) pair of a preference dataset (``variant``: its name),
    whole trajectories as the dataset gives them; a pair whose prompt leaves no room for the
    trajectories within ``max_length`` is left out (an IMDb review may be longer)."""
    rows = []
    for preferred, dispreferred in pairs:
        prompt_tokens = len(tokenizer(preferred["prompt"], add_special_tokens=False)["input_ids"])
        if prompt_tokens >= max_length - 1:
            continue
        stats = pair_entanglement(model, tokenizer, preferred["prompt"],
                                  (preferred["completion"], dispreferred["completion"]), max_length,
                                  ends_answer=preferred["ends_answer"])
        rows.append({"variant": name, "problem_id": preferred["problem_id"], **stats})
    return rows
