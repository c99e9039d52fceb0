"""Preference pairs of the paper's pilot datasets (appendix "Pilot Experiment Details"), read
straight from their catalog files for the gradient-entanglement analysis: no grader, no
offline dataset, only (prompt, preferred, dispreferred) as the datasets provide them.

- IMDb (``stanfordnlp/imdb``, rows ``{text, label}``): the review is the prompt and the
  trajectory a single label token, the right sentiment preferred ("single-token
  (Positive/Negative) preferred and dispreferred trajectories").
- HH (``Anthropic/hh-rlhf``, rows ``{chosen, rejected}``, whole dialogues): the prompt is the
  dialogue up to the last ``Assistant:`` turn, which both share; the trajectories are the two
  final replies.

A pair is ``(preferred, dispreferred)``, each a sample dict as ``fpa.analysis.entanglement``
measures them: ``problem_id``, ``prompt``, ``completion`` and ``ends_answer`` (EOS after it).
"""

from __future__ import annotations

import random
from typing import Callable, Iterable

from fpa.io import read_jsonl

SENTIMENTS = (" negative", " positive")  # IMDb label 0, 1
ASSISTANT = "\n\nAssistant:"


def imdb_pair(row: dict, index: int) -> tuple[dict, dict] | None:
    """The review with its label token preferred over the other label."""
    if row.get("label") not in (0, 1) or not isinstance(row.get("text"), str):
        raise ValueError(f"row {index + 1}: expected 'text' (string) and 'label' 0 or 1, got keys {sorted(row)}")
    prompt = f"Review: {row['text']}\nSentiment:"
    right, wrong = SENTIMENTS[row["label"]], SENTIMENTS[1 - row["label"]]
    # the trajectory is the label token alone: no EOS after it
    return tuple({"problem_id": f"imdb-{index}", "prompt": prompt, "completion": label, "ends_answer": False}
                 for label in (right, wrong))


def hh_pair(row: dict, index: int) -> tuple[dict, dict] | None:
    """The shared dialogue as prompt, the two final assistant replies as trajectories (None: the
    dialogues differ before the last reply, or a reply is empty)."""
    if not isinstance(row.get("chosen"), str) or not isinstance(row.get("rejected"), str):
        raise ValueError(f"row {index + 1}: expected 'chosen' and 'rejected' dialogues (strings), got keys {sorted(row)}")
    cut_chosen, cut_rejected = row["chosen"].rfind(ASSISTANT), row["rejected"].rfind(ASSISTANT)
    if cut_chosen < 0 or cut_rejected < 0:
        return None
    prompt = row["chosen"][:cut_chosen + len(ASSISTANT)]
    if row["rejected"][:cut_rejected + len(ASSISTANT)] != prompt:
        return None
    replies = (row["chosen"][len(prompt):], row["rejected"][len(prompt):])
    if not all(reply.strip() for reply in replies) or replies[0] == replies[1]:
        return None
    return tuple({"problem_id": f"hh-{index}", "prompt": prompt, "completion": reply, "ends_answer": True}
                 for reply in replies)


#: catalog ``loader`` -> row reader
PAIR_READERS: dict[str, Callable[[dict, int], tuple[dict, dict] | None]] = {"imdb": imdb_pair, "hh_rlhf": hh_pair}


def read_pairs(loader: str, rows: Iterable[dict]) -> list[tuple[dict, dict]]:
    """Every usable pair of ``rows`` under ``loader``'s reader."""
    if loader not in PAIR_READERS:
        raise ValueError(f"loader: expected one of {sorted(PAIR_READERS)}, got {loader!r}")
    reader = PAIR_READERS[loader]
    return [pair for pair in (reader(row, index) for index, row in enumerate(rows)) if pair is not None]


def pair_loaders(names: Iterable[str], catalog: dict) -> dict[str, str]:
    """name -> loader of each catalog entry in ``names`` (config ``entanglement.preference``),
    which must be a preference-pair file this module reads."""
    from fpa.catalog import PREFERENCE_SECTION, find_entry

    loaders = {}
    for name in names:
        try:
            section, entry = find_entry(catalog, name)
        except ValueError as error:
            raise ValueError(f"entanglement.preference: {error}") from None
        if section != PREFERENCE_SECTION or entry.get("loader") not in PAIR_READERS:
            raise ValueError(f"entanglement.preference: {name!r}: expected an entry of the catalog's "
                             f"'{PREFERENCE_SECTION}' section with loader one of {sorted(PAIR_READERS)}, got section "
                             f"{section!r}, loader {entry.get('loader')!r}")
        loaders[name] = entry["loader"]
    return loaders


def draw_pairs(loader: str, path: str, *, max_pairs: int, seed: int) -> list[tuple[dict, dict]]:
    """``max_pairs`` pairs of the file at ``path``, drawn with ``seed``; errors name the file."""
    try:
        pairs = read_pairs(loader, read_jsonl(path))
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    if not pairs:
        raise ValueError(f"{path}: no usable {loader} preference pair")
    return random.Random(seed).sample(pairs, min(max_pairs, len(pairs)))
