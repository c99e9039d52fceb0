"""How a training job's ranks share the model: DDP (replicas) or FSDP2 (shards), ``training.parallel``.

DDP (through ``accelerate``): every rank holds the weights, gradients and AdamW state,
about 16 bytes per parameter in fp32. FSDP2 (``torch.distributed.fsdp.fully_shard``,
each decoder layer then the root): each rank holds 1/world of them; a layer's weights
are gathered for its forward and backward, and its gradients reduce-scattered.

The loss head runs inside the wrapped module's forward (``Policy``): under FSDP the
output head's weight is a sharded DTensor outside the forward, unsharded only inside it,
and its gradient reaches the shard through FSDP's reduce-scatter like any other weight's.
Tied embeddings share one parameter, which sits in the root's unit (never split apart).

Checkpoints: DDP saves through ``accelerator.save_state``; FSDP adds the sharded model and
optimizer state (``torch.distributed.checkpoint``, each rank its shard) beside the
scheduler and RNG states that ``accelerate`` writes. The HF-format weights (snapshots,
final checkpoint) come from ``full_state_dict``, which every rank must call (a gather).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
from pathlib import Path
from typing import Callable

import torch
from torch import Tensor

from fpa.memory.training import fsdp_param_dtype
from fpa.precision import GATHER_FORMATS, torch_dtype, torch_name
from fpa.decoder.forward import decoder_hidden

SHARDED_DIR = "sharded"
TIED_HEAD = "lm_head.weight"  # the output head, one tensor with the embeddings when they are tied


class _TiedHeadNotice(logging.Filter):
    """Drops accelerate's "Removed shared tensor {...lm_head.weight} while saving" warning: with tied
    embeddings the head is the embedding matrix, saved once and tied again on load, as expected.
    Any other shared tensor is still reported."""

    NOTICE = re.compile(r"(\[RANK \d+\] )?Removed shared tensor \{(?P<names>[^}]*)\} while saving")

    def filter(self, record: logging.LogRecord) -> bool:
        match = self.NOTICE.match(record.getMessage())
        return match is None or not all(name.strip(" '\"").endswith(TIED_HEAD) for name in match["names"].split(","))


def save_accelerate_state(accelerator, directory: Path) -> None:
    """``accelerator.save_state``, without the expected notice about a tied output head."""
    notices, notice = logging.getLogger("accelerate.utils.other"), _TiedHeadNotice()
    notices.addFilter(notice)
    try:
        accelerator.save_state(str(directory))
    finally:
        notices.removeFilter(notice)


class Policy(torch.nn.Module):
    """The causal LM as DDP / FSDP wrap it: one forward from tokens to the objective's statistics.

    ``statistics(hidden, head_weight)`` runs inside this forward, outside autocast (the chunked
    head keeps its fp32 accumulation); a packed batch adds its ``position_ids`` and ``sequence_lengths``
    (``fpa.decoder.packing``); ``hidden`` [B, L, d] is the decoder's final (post-norm)
    output in fp32, ``head_weight`` [V, d] the output head (unsharded under FSDP).
    """

    def __init__(self, lm, autocast_dtype: torch.dtype | None):
        super().__init__()
        self.lm = lm
        self.autocast_dtype = autocast_dtype

    def forward(self, input_ids: Tensor, attention_mask: Tensor | None, statistics: Callable,
                position_ids: Tensor | None = None, sequence_lengths: tuple[int, ...] | None = None):
        hidden = decoder_hidden(self.lm, input_ids, attention_mask, self.autocast_dtype, position_ids,
                                sequence_lengths)
        return statistics(hidden, self.lm.get_output_embeddings().weight)


class DataParallel:
    """``parallel: ddp``: accelerate's DistributedDataParallel (a plain module in one process)."""

    name = "ddp"

    def __init__(self, accelerator, cfg):
        self.accelerator = accelerator
        self.cfg = cfg

    def prepare(self, policy: Policy, make_optimizer: Callable) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
        return self.accelerator.prepare(policy, make_optimizer(policy.parameters()))

    def unwrap(self, body) -> Policy:
        return self.accelerator.unwrap_model(body)

    def evaluation_module(self, body) -> torch.nn.Module:
        """What runs forwards without gradients: the plain module, whose forward has no DDP hooks to sync."""
        return self.unwrap(body)

    def gradient_sync(self, body, enabled: bool):
        """Skip DDP's all-reduce on all micro-batches but the step's last (gradients add up locally)."""
        if enabled or self.accelerator.num_processes == 1:
            return contextlib.nullcontext()
        return self.accelerator.no_sync(body)

    def clip_grad_norm(self, body, max_norm: float) -> float:
        return float(self.accelerator.clip_grad_norm_(body.parameters(), max_norm))

    def full_state_dict(self, body) -> dict[str, Tensor] | None:
        """The LM's full weights for ``save_pretrained`` on rank 0; None: the replica's own."""
        return None

    def save_state(self, body, optimizer, directory: Path) -> None:
        save_accelerate_state(self.accelerator, directory)

    def load_state(self, body, optimizer, directory: Path) -> None:
        self.accelerator.load_state(str(directory))


class FullyShardedDataParallel(DataParallel):
    """``parallel: fsdp``: FSDP2 over all ranks, options ``training.fsdp_*``."""

    name = "fsdp"

    def prepare(self, policy: Policy, make_optimizer: Callable) -> tuple[torch.nn.Module, torch.optim.Optimizer]:
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy, fully_shard

        if not torch.distributed.is_initialized():
            # one process (no launcher): a world of 1 in memory, FSDP all the same
            torch.distributed.init_process_group("nccl" if torch.cuda.is_available() else "gloo",
                                                 store=torch.distributed.HashStore(), rank=0, world_size=1)
        options = dict(
            reshard_after_forward=self.cfg.fsdp_reshard_after_forward,
            mp_policy=MixedPrecisionPolicy(param_dtype=torch_dtype(fsdp_param_dtype(dataclasses.asdict(self.cfg))),
                                           reduce_dtype=torch_dtype(self.cfg.fsdp_reduce_dtype)),
            offload_policy=(CPUOffloadPolicy(pin_memory=torch.cuda.is_available()) if self.cfg.fsdp_cpu_offload
                            else OffloadPolicy()),
        )
        for layer in policy.lm.get_decoder().layers:
            fully_shard(layer, **options)
        # the root: embeddings, final norm, output head (tied or not). It stays gathered from forward to
        # backward, as FSDP2 does for a root by default: the head's autograd function keeps the gathered
        # weight for its backward, which torch 2.11 finds freed if the root reshards after forward.
        fully_shard(policy, **{**options, "reshard_after_forward": False})
        # the optimizer after sharding: it must hold the DTensor shards that fully_shard put in place
        return policy, make_optimizer(policy.parameters())

    def unwrap(self, body) -> Policy:
        return body

    def evaluation_module(self, body) -> torch.nn.Module:
        """The sharded module itself: only its forward gathers the weights."""
        return body

    def gradient_sync(self, body, enabled: bool):
        """Reduce-scatter after every micro-batch: accumulating unsharded gradients over a step would
        hold a full gradient per rank, the memory FSDP is there to save (more traffic instead)."""
        return contextlib.nullcontext()

    def clip_grad_norm(self, body, max_norm: float) -> float:
        from torch.distributed.tensor import DTensor

        norm = torch.nn.utils.clip_grad_norm_(body.parameters(), max_norm)
        return float(norm.full_tensor() if isinstance(norm, DTensor) else norm)

    def full_state_dict(self, body) -> dict[str, Tensor] | None:
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        full = get_model_state_dict(body, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
        return {name.removeprefix("lm."): tensor for name, tensor in first_names(full, body).items()}

    def save_state(self, body, optimizer, directory: Path) -> None:
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict

        save_accelerate_state(self.accelerator, directory)  # scheduler and RNG (the model is not accelerate's)
        model_state, optimizer_state = get_state_dict(body, optimizer)
        dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=str(directory / SHARDED_DIR))

    def load_state(self, body, optimizer, directory: Path) -> None:
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

        self.accelerator.load_state(str(directory))
        model_state, optimizer_state = get_state_dict(body, optimizer)
        state = {"model": model_state, "optimizer": optimizer_state}
        dcp.load(state, checkpoint_id=str(directory / SHARDED_DIR))
        set_state_dict(body, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"])


def first_names(weights: dict[str, Tensor], module: torch.nn.Module) -> dict[str, Tensor]:
    """A gathered state dict of ``module`` with a tied weight under its first name only, as ``save_pretrained``
    writes it from the model itself (gathered copies share no storage: transformers cannot see the tie)."""
    names = {name for name, _ in module.named_parameters()} | {name for name, _ in module.named_buffers()}
    return {name: tensor for name, tensor in weights.items() if name in names}


PARALLEL = {kind.name: kind for kind in (DataParallel, FullyShardedDataParallel)}


def make_parallel(cfg, accelerator) -> DataParallel:
    """The strategy ``cfg.parallel`` names, its options checked before any model is loaded."""
    if cfg.parallel not in PARALLEL:
        raise ValueError(f"training.parallel: expected one of {sorted(PARALLEL)}, got {cfg.parallel!r}")
    gathered = [torch_name(name) for name in GATHER_FORMATS]  # the config spells them as torch does
    for key, allowed in (("fsdp_param_dtype", [*gathered, "auto"]), ("fsdp_reduce_dtype", gathered)):
        if getattr(cfg, key) not in allowed:
            raise ValueError(f"training.{key}: expected one of {sorted(allowed)}, got {getattr(cfg, key)!r}")
    return PARALLEL[cfg.parallel](accelerator, cfg)
