"""Peak memory per device of one training job of ``fpa.training.loop``, from what it allocates.

The loop holds the weights in fp32 and runs the body under bf16 autocast (``precision: bf16``)
or in fp32; AdamW keeps two fp32 moments; the body returns final hidden states and the chunked
head (``fpa.training.head``) turns them into per-token statistics in ``[chunk, V]`` fp32 buffers.
Per device (rank), in bytes, with P parameters over W ranks:

- **static**: weights 4P, AdamW moments 8P, DDP's gradient buckets 4P (W > 1: a flat copy of
  every gradient); under FSDP the weights and moments / W, or none with CPU offload;
  the cached reference's output head 4·V·d_ref when the objective reads it.
- **forward-backward**: autograd's saved activations over the micro-batch's T = sequences x
  ``max_length`` tokens (``activation_bytes_per_token``; a checkpointed layer keeps only its input,
  ``checkpointed_layers``), the bf16 copies of the weights
  that autocast keeps for backward (2 B per matmul weight; under FSDP, world 1 included, the
  gathered layers in flight and the root instead), the head's buffers and its fp32 weight gradient.
- **end of backward**: every gradient 4P (/ W under FSDP, none offloaded) and, with tied embeddings, the
  embedding's dense gradient before it is added to the head's.
- **optimizer step**: the gradients and one fp32 temporary per parameter (foreach AdamW's
  square root of the second moment).

The peak is static + the largest of the three phases. Sequences are taken at ``max_length``:
a bound, reached by the longest micro-batch. ``benchmarks/memory/memory_plan.py`` checks the
estimate against measured peaks.
"""

from __future__ import annotations

from dataclasses import dataclass

from fpa.memory.architecture import Architecture
from fpa.precision import element_bytes, torch_name

FP32 = 4


@dataclass(frozen=True)
class TrainingJob:
    """What one rank of a training job runs."""

    sequences: int  # per micro-batch and rank
    max_length: int
    precision: str = "bf16"  # bf16 autocast over fp32 weights, or fp32
    gradient_checkpointing: bool = False
    checkpoint_every_layers: int = 1  # with gradient_checkpointing: every k-th layer recomputes (fpa.training.body)
    chunk_size: int = 1024
    world: int = 1
    parallel: str = "ddp"  # ddp | fsdp
    cpu_offload: bool = False  # FSDP: sharded weights, gradients and AdamW state in CPU memory
    reshard_after_forward: bool = True
    gathered_element: int = FP32  # bytes per weight that FSDP gathers (fsdp_param_dtype)
    reference_head: bool = False  # the cached reference's W_ref on the device (FPA, KL, diagnostics)
    head_buffers: int = 3  # [chunk, V] fp32 buffers of the head's forward (objective_head_buffers)

    @property
    def tokens(self) -> int:
        return self.sequences * self.max_length

    @property
    def element(self) -> int:
        return element_bytes(self.precision)


def fsdp_param_dtype(training: dict) -> str:
    """The dtype FSDP gathers the weights in (and computes with): ``fsdp_param_dtype``, ``auto`` being
    bfloat16 under bf16 precision (FSDP2's and the peers' mixed precision: bf16 compute and gathers,
    fp32 masters and reduce-scatter), else float32."""
    chosen = training.get("fsdp_param_dtype", "auto")
    if chosen != "auto":
        return chosen
    return torch_name(training.get("precision", "fp32"))


def compute_weights_dtype(training: dict) -> str:
    """The dtype of the weights a training's forward computes with: FSDP's gathered dtype, else float32
    (DDP and one process keep fp32 weights; autocast casts per op). The reference cache loads its model
    in it, so that at step 0 the policy and the reference compute alike."""
    return fsdp_param_dtype(training) if training.get("parallel") == "fsdp" else torch_name("fp32")


def head_products(head_precision: str, device_type: str) -> str:
    """The loss head's products for ``training.head_precision`` on a ``device_type`` (``cuda``, ``cpu``):
    ``auto`` is bf16 on CUDA and fp32 elsewhere (TF32 is CUDA's alone); a precision is itself."""
    if head_precision != "auto":
        return head_precision
    return "bf16" if device_type == "cuda" else "fp32"


def reference_cache_dtype(training: dict, device_type: str) -> str:
    """The dtype the reference cache stores z_ref in, for a training on ``device_type``: bfloat16
    where the head's products are bf16, else float32.

    FPA's π̂ takes h_θ − h_ref between equally rounded hidden states, so with a cache narrower than the
    products it rounds z_θ to the cache's dtype for log π_θ too (``fpa.training.head_chunk.policy_dtype``,
    no product beyond the reference's), and Off-RL, which reads no z_ref, does not: λ = 0 would differ
    from Off-RL by that rounding. A cache in the products' own input precision rounds nothing they do not:
    bf16 products round z_θ and z_ref to bf16 for every objective (CUDA's ``auto``, the paper's configs:
    half the cache's bytes, no rounding added), and fp32 products (the CPU, the toy) and TF32 ones take
    fp32 states, each rounded by the tensor cores alike. So FPA at λ = 0 is Off-RL, and FPA − Off-RL
    carries λ alone (``tests/training/test_lambda_zero.py``)."""
    return torch_name("bf16" if head_products(training.get("head_precision", "auto"), device_type) == "bf16" else "fp32")


def head_buffers(has_ref: bool, ref_logsumexp_given: bool, want_kl: bool) -> int:
    """The [chunk, V] fp32 buffers a ``fpa.training.head.token_statistics`` call holds at once (its forward;
    its backward holds no more): h_θ; with a reference h_ref; and a scratch where lse_ref must be computed
    or the KL keeps h_ref beside π̂."""
    return 1 + int(has_ref) + int(has_ref and (not ref_logsumexp_given or want_kl))


def objective_head_buffers(objective, reference_mode: str) -> int:
    """``head_buffers`` of ``objective``'s head call (an ``fpa.objectives.Objective``) with the reference
    ``reference_mode`` gives it (``fpa.reference.inputs.make_reference``): an online reference's hidden
    states whenever the objective needs the reference; the cache's, with their logsumexp, only when it
    needs them per token. FPA on the cache: 2; Off-RL: 1; a KL: 3."""
    per_token = bool({"hat", "fwd_kl"} & set(objective.requires))
    online = reference_mode == "online"
    return head_buffers(objective.needs_reference and (online or per_token), ref_logsumexp_given=not online,
                        want_kl="fwd_kl" in objective.requires)


def head_chunk_rows(budget_bytes: int, vocab_size: int, buffers: int) -> int:
    """Rows per chunk of the loss head within ``budget_bytes`` of ``[chunk, V]`` fp32 buffers.

    As Liger-Kernel sizes its chunks from the vocabulary, but from a byte budget: the largest
    power of two whose ``buffers`` fit, at least 1.
    A power of two keeps the chunk boundaries, and so the fp32 accumulation order of the head's
    weight gradient, the same for every budget between two of them.
    """
    rows = budget_bytes // (buffers * FP32 * vocab_size)
    return 1 << max(0, int(rows).bit_length() - 1)


def objective_chunk_rows(chunk_size: int | str, head_memory_mb: float, vocab_size: int, objective,
                         reference_mode: str) -> int:
    """The loss head's rows per chunk of a run (``training.chunk_size``, ``head_memory_mb``, ``reference``):
    ``chunk_size`` itself, or for ``auto`` the ``head_chunk_rows`` of the buffers ``objective``'s head call
    holds (``objective_head_buffers``): the trainer's chunk and the planner's, so both budget alike."""
    if chunk_size != "auto":
        return chunk_size
    return head_chunk_rows(int(head_memory_mb * 2**20), vocab_size, objective_head_buffers(objective, reference_mode))


def activation_bytes_per_token(arch: Architecture, precision: str, seq_len: int) -> dict[str, int]:
    """Bytes autograd saves per token of a padded batch: one layer's, and once per model.

    Per layer: the residual stream in fp32 at both norms' inputs (4d each) and their
    normalised values (4d each); the norms' outputs as the matmuls save them (fp32: one 4d
    tensor each; bf16: autocast's copy per consumer, 3·2d for q/k/v, 2·2d for gate/up);
    SDPA's q, k and v (k and v repeated to every head: padding makes transformers pass a
    mask, and then it does not use SDPA's grouped-query mode), its output (4·e·h·hd, e = 2
    or 4 bytes) and log-sum-exp (4·h); the [S, S] attention mask per token (bf16: autocast's
    copy per layer; fp32: one, per model); Qwen3's q/k norms (their fp32 input and normalised
    value, (4 + e)·(h + h_kv)·hd); the MLP's gate, SiLU, up and product (4·e·f). Per model: the
    final norm's input, normalised value and output (the hidden states the head reads).
    """
    d, f = arch.hidden_size, arch.intermediate_size
    bf16 = precision == "bf16"
    e = 2 if bf16 else FP32
    norm_outputs = 10 * d if bf16 else 8 * d
    attention = 4 * e * arch.q_width + FP32 * arch.num_attention_heads + (2 * seq_len if bf16 else 0)
    qk_norm = (FP32 + e) * (arch.q_width + arch.kv_width) if arch.qk_norm else 0
    layer = 4 * FP32 * d + norm_outputs + attention + qk_norm + 4 * e * f
    return {"layer": layer, "model": 3 * FP32 * d + (0 if bf16 else FP32 * seq_len)}


def checkpointed_layers(num_layers: int, job: TrainingJob) -> int:
    """Decoder layers that keep only their input and recompute the rest in backward: with
    ``gradient_checkpointing``, Transformers' ``every_n_layers`` checkpoints layers 0, k, 2k, …"""
    return -(-num_layers // job.checkpoint_every_layers) if job.gradient_checkpointing else 0


def training_memory(arch: Architecture, job: TrainingJob) -> dict[str, int]:
    """Bytes per rank by component, and ``peak`` (see the module docstring)."""
    P, V, d, L, T = arch.params, arch.vocab_size, arch.hidden_size, arch.num_hidden_layers, job.tokens
    fsdp = job.parallel == "fsdp"
    shard = job.world if fsdp else 1
    on_device = 0 if fsdp and job.cpu_offload else 1
    out = {
        "weights": on_device * FP32 * P // shard,
        "optimizer": on_device * 2 * FP32 * P // shard,
        "ddp_buckets": FP32 * P if job.parallel == "ddp" and job.world > 1 else 0,
        "reference_head": FP32 * V * d if job.reference_head else 0,
    }
    per_token = activation_bytes_per_token(arch, job.precision, job.max_length)
    recomputed = checkpointed_layers(L, job)
    # a checkpointed layer keeps its input; backward recomputes one layer at a time
    activations = T * ((L - recomputed) * per_token["layer"] + recomputed * FP32 * d
                       + (per_token["layer"] if recomputed else 0) + per_token["model"])
    # the gradient flowing back through a layer: the residual's and an MLP-wide one
    transient = T * (2 * FP32 * d + job.element * arch.intermediate_size)
    rows = min(job.chunk_size, T)
    head = FP32 * rows * V * job.head_buffers + FP32 * T * d + FP32 * V * d  # buffers, grad_hidden, grad_W
    out["activations"] = activations + transient
    out["head"] = head
    out["unsharded_weights"] = _working_weights(arch, job)
    grads = on_device * FP32 * P // shard
    out["gradients"] = grads
    forward_backward = out["activations"] + head + out["unsharded_weights"]
    end_of_backward = grads + (FP32 * V * d if arch.tie_word_embeddings else 0)
    optimizer_step = grads + on_device * FP32 * P // shard
    static = out["weights"] + out["optimizer"] + out["ddp_buckets"] + out["reference_head"]
    out["peak"] = static + max(forward_backward, end_of_backward, optimizer_step)
    return out


def _working_weights(arch: Architecture, job: TrainingJob) -> int:
    """Weights held beyond the fp32 masters during forward and backward.

    DDP / one process under bf16 autocast: a bf16 copy of every matmul weight (cached for the
    backward). FSDP2 at any world, one included (``fpa.training.parallel`` shards each decoder layer,
    then the root): the unsharded layers in the gathered dtype, when resharded after forward two in
    flight over several ranks (the one computing and the one whose all-gather is prefetched), one at
    world 1 (there FSDP2 gathers nothing: a layer's unshard casts its full shard into its unsharded
    storage as the layer starts, so a prefetch holds no memory), and every one when not resharded; the
    root's weights (embeddings, an untied head, the final norm) stay gathered from forward to backward.
    bf16 autocast adds its copy of a matmul weight only where FSDP gathers it in fp32: a weight
    already in bf16 it uses as it is.
    """
    layers = arch.num_hidden_layers
    if job.parallel != "fsdp":
        return 2 * layers * arch.layer_linear_params if job.precision == "bf16" else 0
    in_flight = (1 if job.world == 1 else 2) if job.reshard_after_forward else layers
    root = arch.params - layers * arch.layer_params
    casts = 2 * in_flight * arch.layer_linear_params if job.precision == "bf16" and job.gathered_element == FP32 else 0
    return job.gathered_element * (in_flight * arch.layer_params + root) + casts
