"""The toy base model's settings (``ToyModelConfig``) and presets, apart from the model code: the
config's check (``fpa check-config``, planning) builds them as rule ``toy_base_model`` does, without
importing torch, so a setting the job would refuse is refused before any job runs.

    toy_model_config({"preset": "ci", "steps": 30}, "Q: {problem}\\nA:")   # models.<m>.toy
"""

from __future__ import annotations

import typing
from dataclasses import asdict, dataclass, fields, replace
from typing import Mapping

from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, chain_lengths, check_trace_style

#: the largest integer setting: a C int, as the config schema bounds its own
INT_MAX = 2**31 - 1
#: the least value of an integer setting where it is not 1 (sizes, counts and steps)
_INT_LEAST = {"seed": 0, "warmup_steps": 0, "n_operands": 2}
_TYPE_NAMES = {int: "integer", float: "number", str: "string", type(None): "null"}


@dataclass(frozen=True)
class ToyModelConfig:
    seed: int = 0
    # data: problems of the "sft" split, each step re-rendered with fresh slips
    n_train_problems: int = 20_000
    # chains of min_operands..n_operands operands, equally many of each (docs/toy.md: the benchmarks
    # stay within this range; beyond it the model fails)
    n_operands: int = 10
    min_operands: int | None = 4
    # per-step probability of a wrong (carried) partial sum; at 0.06 the 1,000-step SFT learns the
    # arithmetic itself (toy7 ~89 % at T=0.7), at 0.09-0.13 the noisy labels keep it from it (docs/toy.md)
    slip_rate: float = 0.06
    # how each step and the ending are written (fpa.toy.task.TRACE_STYLES): "plain", one way; "varied",
    # surface forms drawn with uneven weights, tokens correct and incorrect traces share (docs/toy.md)
    trace_style: str = "plain"
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE
    # model: Qwen2 with head_dim 64
    d_model: int = 128
    n_layers: int = 2
    n_heads: int = 2
    d_ff: int = 256
    # optimisation: AdamW, linear warmup then cosine decay to lr / 10
    steps: int = 1000
    batch_size: int = 32
    lr: float = 2e-3  # 3e-3 and 6e-3 learnt the arithmetic clearly worse in 1000 steps
    warmup_steps: int = 50
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    log_every: int = 50

    def __post_init__(self):
        for name, kind in typing.get_type_hints(ToyModelConfig).items():
            _check_setting(name, kind, getattr(self, name))
        if self.d_model != 64 * self.n_heads:
            raise ValueError(f"d_model: expected 64 * n_heads = {64 * self.n_heads} (head_dim 64), got {self.d_model}")
        if not 0.0 <= self.slip_rate < 1.0:
            raise ValueError(f"slip_rate: expected a probability in [0, 1), got {self.slip_rate}")
        check_trace_style(self.trace_style)
        chain_lengths(self.n_operands, self.min_operands)
        for name in ("lr", "grad_clip"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name}: expected number > 0, got {getattr(self, name)!r}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay: expected number >= 0, got {self.weight_decay!r}")


def _check_setting(name: str, kind, value) -> None:
    """``value`` is of the field's type (an int is no bool; a float may be an int), and an integer
    within ``_INT_LEAST`` (else 1) .. ``INT_MAX``."""
    kinds = typing.get_args(kind) or (kind,)
    allowed = tuple(dict.fromkeys(k for k in kinds for k in ((int, float) if k is float else (k,))))
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        expected = " or ".join(_TYPE_NAMES[k] for k in kinds)
        raise ValueError(f"{name}: expected {expected}, got {value!r}")
    if isinstance(value, int) and int in kinds and not _INT_LEAST.get(name, 1) <= value <= INT_MAX:
        raise ValueError(f"{name}: expected an integer {_INT_LEAST.get(name, 1)} <= {name} <= {INT_MAX}, got {value}")


TOY_PRESETS = {
    "default": ToyModelConfig(),
    # CI: accuracy only has to be > 0, so that some problems get mixed samples.
    "ci": ToyModelConfig(steps=150, n_train_problems=2_000, warmup_steps=15, log_every=25, n_operands=6,
                         min_operands=None, slip_rate=0.13),
}


def with_overrides(cfg: ToyModelConfig, **overrides) -> ToyModelConfig:
    """``cfg`` with some fields replaced; an unknown name raises a ``ValueError`` listing the fields."""
    unknown = sorted(set(overrides) - {field.name for field in fields(cfg)})
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown key; expected one of {sorted(asdict(cfg))} or preset")
    return replace(cfg, **overrides)


def toy_model_config(settings: Mapping, prompt_template: str) -> ToyModelConfig:
    """The settings of a toy model (a config's ``models.<m>.toy``: a ``preset``, default "default",
    and fields of ``ToyModelConfig`` replacing the preset's), prompted with the model's template
    unless they set their own; a ``ValueError`` naming the setting otherwise."""
    overrides = dict(settings)
    preset = overrides.pop("preset", "default")
    if not isinstance(preset, str) or preset not in TOY_PRESETS:
        raise ValueError(f"preset: expected one of {sorted(TOY_PRESETS)}, got {preset!r}")
    overrides.setdefault("prompt_template", prompt_template)
    return with_overrides(TOY_PRESETS[preset], **overrides)
