"""Model selection on the validation split ("early stopping on the performance of the
validation set", the paper's appendix "Training Details").

A run's candidates are its snapshots and its final checkpoint, each scored by Pass@1 on the
config's selection benchmark (``model_selection.benchmark``). The selected candidate is the
best score; on a tie the earliest step wins (the paper stops early: a later step that only
matches the best is not an improvement). The selected weights are linked, not copied, into
the run's ``selected/`` directory, so selecting a 7B checkpoint costs no disk.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Sequence


def select_step(scores: Sequence[tuple[int, float]]) -> int:
    """The step with the highest score; the earliest of tied steps."""
    if not scores:
        raise ValueError("select_step: no candidates to select from")
    best = max(score for _, score in scores)
    return min(step for step, score in scores if score == best)


def link_tree(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Mirror the files of ``source`` into the new directory ``target`` as hard links (a copy
    across file systems, where a link cannot be made)."""
    source, target = Path(source), Path(target)
    for path in sorted(source.rglob("*")):
        destination = target / path.relative_to(source)
        if path.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, destination)
        except OSError:
            shutil.copy2(path, destination)
