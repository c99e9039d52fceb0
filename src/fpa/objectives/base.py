"""What every objective sees, and what it must declare.

The training engine turns one micro-batch of model outputs into a ``SequenceStats``
once; an objective is a pure function of those statistics and of its own
hyperparameters, returning ``(loss, metrics)``. An objective never sees the model.

Shapes: ``B`` sequences in the micro-batch, ``P`` preference pairs among them.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping

if TYPE_CHECKING:  # torch is imported where a loss runs: the registry (and config validation) loads without it
    from torch import Tensor

#: Statistics an objective may ask the engine for, beyond the always-present ones.
#: ``ref``: log π_ref(y|x) (needs the reference cache); ``hat``: log π̂_λ(y|x);
#: ``fwd_kl``: Σ_t KL(π_ref‖π_θ) over completion tokens; ``pairs``: chosen/rejected
#: indices (pairs never cross problems: micro-batches hold whole problem groups).
KNOWN_REQUIREMENTS = frozenset({"ref", "hat", "fwd_kl", "pairs"})
#: Requirements that need the frozen reference's hidden states.
NEEDS_REFERENCE = frozenset({"ref", "hat", "fwd_kl"})


@dataclass(frozen=True)
class SequenceStats:
    """Per-sequence statistics of one micro-batch.

    Attributes:
      logp: [B] Σ_t log π_θ(y_t | x, y_<t) over completion tokens; carries gradient.
      length: [B] number of completion tokens |y| (float, > 0).
      reward: [B] the scalar reward R of each sequence (+1 correct, −1 incorrect).
      group: [B] long, problem id; sequences of one prompt share it.
      ref_logp: [B] Σ_t log π_ref(y_t | ·), no gradient. Present iff "ref" required.
      hat_logp: [B] Σ_t log π̂_λ(y_t | ·) with π̂ = softmax((1+λ)h_θ − λh_ref),
        no gradient. Present iff "hat" required.
      fwd_kl: [B] Σ_t KL(π_ref(·|x,y_<t) ‖ π_θ(·|x,y_<t)); carries gradient.
        Present iff "fwd_kl" required.
      chosen: [P] long indices of the preferred sequence of each pair.
      rejected: [P] long indices of the dispreferred sequence of each pair.
      batch_mean: [] the mean of the objective's ``batch_statistic`` over the whole optimizer
        batch (every micro-batch of every rank), no gradient. Present iff the objective
        declares a ``batch_statistic``.
    """

    logp: Tensor
    length: Tensor
    reward: Tensor
    group: Tensor
    ref_logp: Tensor | None = None
    hat_logp: Tensor | None = None
    fwd_kl: Tensor | None = None
    chosen: Tensor | None = None
    rejected: Tensor | None = None
    batch_mean: Tensor | None = None

    def __post_init__(self) -> None:
        (batch,) = self.logp.shape
        for name in ("length", "reward", "group", "ref_logp", "hat_logp", "fwd_kl"):
            value = getattr(self, name)
            if value is not None and value.shape != (batch,):
                raise ValueError(f"SequenceStats.{name}: expected shape ({batch},), got {tuple(value.shape)}")
        if self.batch_mean is not None and self.batch_mean.shape != ():
            raise ValueError(f"SequenceStats.batch_mean: expected a scalar, got shape {tuple(self.batch_mean.shape)}")
        if (self.chosen is None) != (self.rejected is None):
            raise ValueError("SequenceStats: chosen and rejected must be given together")
        if self.chosen is not None and self.chosen.shape != self.rejected.shape:
            raise ValueError(
                f"SequenceStats: chosen {tuple(self.chosen.shape)} and rejected "
                f"{tuple(self.rejected.shape)} must have the same shape"
            )

    def require(self, name: str) -> Tensor:
        value = getattr(self, name)
        if value is None:
            raise ValueError(f"SequenceStats.{name} is missing: the objective must list it in `requires`"
                             " (batch_mean: declare a `batch_statistic`)")
        return value


Metrics = dict[str, "Tensor"]
LossFn = Callable[[SequenceStats, object], "tuple[Tensor, Metrics]"]


@dataclass(frozen=True)
class Objective:
    """A registered training objective.

    Attributes:
      name: registry key; also the ``objective:`` value in config.
      params_type: frozen dataclass of hyperparameters; its defaults are the paper's.
      loss: pure ``(stats, params) -> (scalar loss to minimise, metrics)``.
      requires: subset of ``KNOWN_REQUIREMENTS``.
      extrapolation: name of the ``params`` field holding λ for ``hat_logp``, if any.
      sample_filter: which samples enter training: "all", "correct" (SFT/RFT).
      summary: one line for the README and ``fpa methods``.
      batch_statistic: ``(stats, params) -> [B]`` per-sequence values, for an objective whose loss
        needs a batch-level statistic (KTO's z0). The engine averages them over the whole optimizer
        batch in a no-gradient pass before the step, so that the statistic does not depend on the
        micro-batch size or the number of ranks, and hands the mean to ``loss`` as
        ``stats.batch_mean``; in validation, the mean over the whole validation split.
    """

    name: str
    params_type: type
    loss: LossFn
    requires: frozenset[str] = frozenset()
    extrapolation: str | None = None
    sample_filter: str = "all"
    summary: str = ""
    batch_statistic: Callable[[SequenceStats, object], "Tensor"] | None = None

    def __post_init__(self) -> None:
        unknown = set(self.requires) - KNOWN_REQUIREMENTS
        if unknown:
            raise ValueError(f"objective {self.name}: unknown requirements {sorted(unknown)}")
        if self.sample_filter not in ("all", "correct"):
            raise ValueError(f"objective {self.name}: sample_filter must be 'all' or 'correct'")

    def parse_params(self, raw: Mapping[str, object] | None, where: str) -> object:
        """Build ``params_type`` from a config mapping; errors name ``where`` and the key."""
        return parse_params(self.params_type, raw, where, owner=self.name)

    @property
    def needs_reference(self) -> bool:
        return bool(self.requires & NEEDS_REFERENCE)

    def hat_lambda(self, params: object) -> float | None:
        return None if self.extrapolation is None else float(getattr(params, self.extrapolation))


def parse_params(params_type: type, raw: Mapping[str, object] | None, where: str, *, owner: str,
                 defaults: Mapping[str, object] | None = None) -> object:
    """``params_type(**defaults, **raw)`` for a method's config mapping ``raw``; an unknown key, a value
    that is not a number or string, or one its ``__post_init__`` rejects raises a one-line error that
    names ``where`` and the key."""
    raw = dict(raw or {})
    fields = {field.name for field in dataclasses.fields(params_type)}
    for key, value in raw.items():
        if key not in fields:
            raise ValueError(f"{where}.{key}: unknown parameter of {owner}; expected one of {sorted(fields)}")
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"{where}.{key}: expected a number or string, got {value!r}")
    try:
        return params_type(**{**(defaults or {}), **raw})
    except ValueError as err:
        raise ValueError(f"{where}.{err}") from None


def check_range(name: str, value: float, *, low: float | None = None, high: float | None = None,
                low_open: bool = False) -> None:
    """Raise ``ValueError('name: expected ..., got value')`` when out of range (for Params.__post_init__)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ValueError(f"{name}: expected a number, got {value!r}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"{name}: expected number {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name}: expected number <= {high}, got {value!r}")
