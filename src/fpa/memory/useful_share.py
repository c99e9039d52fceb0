"""What share of a training step's executed FLOPs a model needs (MFU's model FLOPs over the real tokens),
as ``benchmarks/training/flops.py`` counts it for config/paper.yaml's step: the rest is padding, attention
beyond its causal half, the loss head's recomputation and, with gradient checkpointing, the layers'
second forward. The planner's training GPU-hours are model FLOPs / (peak × the GPU's rate on executed
FLOPs × this share), so a packed layout or less recomputation shows as fewer hours.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from fpa.io import read_json
from fpa.project import PROJECT_ROOT

FLOPS_RECORD = PROJECT_ROOT / "benchmarks" / "training" / "results" / "flops.json"
#: the method whose step the share is read from: the plain step (FPA's adds its reference head, ~1.5 points)
METHOD = "offrl"


def measured_share(training: Mapping, record: Path = FLOPS_RECORD) -> tuple[float, str] | None:
    """The useful share of a step trained as ``training`` (its ``attention``'s layout, padded or packed,
    and its checkpointing of every ``checkpoint_every_layers``-th layer) and where it comes from; None
    where ``record`` counts no step of that layout."""
    if not Path(record).is_file():
        return None
    data = read_json(record)
    layout = "packed" if training["attention"] == "packed" else "masked"  # causal: masked's padded rows
    executed = {case["gradient_checkpointing"]: case["total"] for case in data["cases"]
                if (case["method"], case["attention"]) == (METHOD, layout)}
    if set(executed) != {True, False}:
        return None
    every = training["checkpoint_every_layers"]
    recomputed = (executed[True] - executed[False]) / every if training["gradient_checkpointing"] else 0
    checkpointing = f", checkpointing every {every} layer(s)" if training["gradient_checkpointing"] else ""
    return (data["useful"]["step"] / (executed[False] + recomputed),
            f"{Path(record).name}: {layout}{checkpointing}, at {data['commit'][:7]}")


def useful_share(training: Mapping, record: Path = FLOPS_RECORD) -> tuple[float, str]:
    """``measured_share``, else checkpointing's second forward alone (6 of 8 FLOPs useful; padding not
    counted)."""
    measured = measured_share(training, record)
    if measured is not None:
        return measured
    return (0.75 if training["gradient_checkpointing"] else 1.0), "assumed: no FLOP count of this layout"
