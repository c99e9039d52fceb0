"""What an online RLVR method is: its hyperparameters (the paper's RLVR table as defaults); how
they map onto TRL's ``GRPOConfig``: ``fpa.training.online.settings``.

An online method samples its own groups of G completions per prompt from the current policy,
grades them with the project's grader (the one that labels the offline data) and takes
PPO-style clipped steps on group-normalised advantages (appendix "RLVR Training"). GRPO and
DAPO differ only in settings (``fpa.online.grpo``, ``fpa.online.dapo``), so one trainer runs both
(``fpa.training.online``).

Batch sizes are counted as the paper counts them: ``batch_prompts`` prompts per rollout (its
"global batch"), ``mini_batch_prompts`` prompts per optimizer step (so a rollout is
``batch_prompts / mini_batch_prompts`` optimizer steps), ``micro_batch`` completions per
forward pass of one process (gradient accumulation fills the rest).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from fpa.objectives.base import check_range, parse_params

LOSS_TYPES = ("grpo", "dapo")

# the GPU memory share of the vLLM engine that TRL colocates with an online run's policy on each GPU
# (GRPOConfig.vllm_gpu_memory_utilization, TRL's default; fpa.training.online.run passes it; fpa.memory.plan plans it)
COLOCATED_VLLM_SHARE = 0.3


@dataclass(frozen=True)
class OnlineParams:
    """Defaults: the paper's GRPO column of its RLVR hyperparameter table (Qwen3-4B-Base).

    ``loss_type``: ``grpo`` averages each completion's tokens, then the completions (the
    paper's GRPO objective); ``dapo`` averages over every token of the batch (token-mean).
    ``dynamic_sampling_rounds``: 0 keeps every group; N > 0 drops the groups whose G
    completions are all correct or all incorrect and generates up to N batches to fill the
    batch with informative groups (DAPO's dynamic sampling).
    """

    rollout_steps: int = 1500
    batch_prompts: int = 128
    mini_batch_prompts: int = 64
    micro_batch: int = 8
    num_generations: int = 8
    temperature: float = 0.7
    max_new_tokens: int = 2048
    epsilon: float = 0.2
    epsilon_high: float = 0.2
    beta: float = 0.0
    loss_type: str = "grpo"
    dynamic_sampling_rounds: int = 0

    def __post_init__(self) -> None:
        for name in ("rollout_steps", "batch_prompts", "mini_batch_prompts", "micro_batch", "max_new_tokens"):
            _check_int(name, getattr(self, name), low=1)
        _check_int("num_generations", self.num_generations, low=2)
        _check_int("dynamic_sampling_rounds", self.dynamic_sampling_rounds, low=0)
        check_range("temperature", self.temperature, low=0.0, low_open=True)
        check_range("epsilon", self.epsilon, low=0.0, high=1.0, low_open=True)
        check_range("epsilon_high", self.epsilon_high, low=0.0, low_open=True)
        check_range("beta", self.beta, low=0.0)
        if self.loss_type not in LOSS_TYPES:
            raise ValueError(f"loss_type: expected one of {list(LOSS_TYPES)}, got {self.loss_type!r}")
        if self.batch_prompts % self.mini_batch_prompts:
            raise ValueError(f"mini_batch_prompts: expected a divisor of batch_prompts {self.batch_prompts}, "
                             f"got {self.mini_batch_prompts}")

    @property
    def optimizer_steps(self) -> int:
        """TRL's ``max_steps``: optimizer steps over all rollouts."""
        return self.rollout_steps * self.batch_prompts // self.mini_batch_prompts


def _check_int(name: str, value: object, *, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")


@dataclass(frozen=True)
class OnlineMethod:
    """A registered online method: a name (``methods.<m>.online`` in config) and its defaults."""

    name: str
    defaults: Mapping[str, object]
    summary: str = ""

    def parse_params(self, raw: Mapping[str, object] | None, where: str) -> OnlineParams:
        """``OnlineParams`` from the method's defaults and a config mapping; errors name ``where`` and the key."""
        return parse_params(OnlineParams, raw, where, owner=self.name, defaults=self.defaults)
