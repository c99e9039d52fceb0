"""Sampling with vLLM's offline ``LLM.generate``: the backend of the pipeline on GPU.

One vLLM request per prompt, ``SamplingParams(n=n, temperature=T,
max_tokens=max_new_tokens, seed=s)``. The request seed ``s`` is derived from
(seed, prompt text, occurrence of that prompt in the call); vLLM gives sample
``j`` of the request the seed ``s + j`` and draws it from its own generator
(``vllm/v1/engine/parallel_sampling.py``). This gives:

  * the same call (same vLLM version, hardware, dtype and engine options)
    returns the same completions;
  * prompt order, the other prompts of the call and sharding of the prompt
    list (with ``offsets`` for prompts repeated across shards) do not change
    what a prompt gets, up to last-bit differences of
    batched kernels (a draw that lands that close to a probability boundary
    can flip; more often in bfloat16 and on a GPU than in float32 on a CPU);
  * ``temperature == 0`` is greedy decoding, repeated ``n`` times (as are
    temperatures below 1e-5, which vLLM treats as greedy).
The samples are not those of ``HFBackend`` for the same seed (another random
stream); greedy completions agree with it in float32 up to near-ties.

Only the eos ids are taken from the model: the model's ``generation_config``
sampling settings (top_p, top_k, repetition_penalty, ...) are ignored, so the
samples follow softmax(logits / T) as with ``HFBackend``. A sample stops at
any eos id of ``generation_config``, at the tokenizer's eos, at the stop words that
are one added token and (vLLM's ``stop``) at the other stop words; its tokens are
decoded at once and cut at the first stop word like ``HFBackend`` does
(``fpa.generation.stops.finish``: same text and finish reason for the same tokens).

A curve job loads each later checkpoint into its running engine (``load_weights``, through the
workers' ``CheckpointReload`` extension) instead of starting an engine per checkpoint.

vLLM is imported when the class is instantiated, so this module (and the
``BACKENDS`` registry) import without it. A script that starts the engine must
do so under ``if __name__ == "__main__":`` (vLLM starts worker processes).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from typing import Mapping, Sequence

from fpa.generation.backend import check_sampling_args
from fpa.generation.stops import Completion, finish, stop_token_ids


def request_seed(seed: int, prompt: str, occurrence: int) -> int:
    """Seed of the request for ``prompt``; < 2**62, so vLLM's ``seed + j`` stays an int64."""
    key = f"{seed}\0{occurrence}\0{prompt}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") >> 2


class VLLMBackend:
    """``GenerationBackend`` on ``vllm.LLM``.

    Options: tensor_parallel_size, dtype ("auto" turns a float32 checkpoint into
    bfloat16/float16: pass "float32" to match ``HFBackend``), gpu_memory_utilization,
    max_model_len, batch_size (vLLM's ``max_num_seqs``; None: vLLM's default),
    enforce_eager (no CUDA graphs / torch.compile), seed (engine seed; the
    samples depend only on the per-request seeds), and ``engine_options``:
    further ``vllm.LLM`` keyword arguments (e.g. ``kv_cache_memory_bytes``).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike,
        *,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        batch_size: int | None = None,
        enforce_eager: bool = False,
        seed: int = 0,
        **engine_options,
    ):
        if tensor_parallel_size < 1:
            raise ValueError(f"tensor_parallel_size: expected >= 1, got {tensor_parallel_size}")
        if not 0 < gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization: expected in (0, 1], got {gpu_memory_utilization}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size: expected >= 1 or None, got {batch_size}")
        if batch_size is not None:
            engine_options["max_num_seqs"] = batch_size
        # the LLM's arguments, kept for a rebuild on another checkpoint (load_weights)
        self._engine_args = dict(
            tensor_parallel_size=tensor_parallel_size,
            dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            enforce_eager=enforce_eager,
            seed=seed,
            # Sample from softmax(logits / T) only, not with the model's
            # generation_config defaults (top_p, top_k, ...).
            generation_config="vllm",
            worker_extension_cls=f"{__name__}.CheckpointReload",
            **engine_options,
        )
        self._start(model_dir)

    def _start(self, model_dir: str | os.PathLike) -> None:
        from vllm import LLM  # lazy: vLLM lives in its own environment (envs/vllm.yaml)

        self.llm = LLM(model=str(model_dir), **self._engine_args)
        self.tokenizer = self.llm.get_tokenizer()
        self.eos_ids = _eos_ids(model_dir, self.tokenizer)

    def load_weights(self, model_dir: str | os.PathLike) -> None:
        """Another checkpoint of the same model into the running engine: each worker reloads its shard in
        place (``CheckpointReload.load_checkpoint``), then the prefix cache is cleared, as its blocks hold
        keys and values of the old weights. vLLM refuses the reset (returns False) while a block is in use:
        sampling on would then reuse the old weights' blocks for shared prompt prefixes."""
        self.llm.collective_rpc("load_checkpoint", args=(str(model_dir),))
        if not self.llm.reset_prefix_cache():
            raise RuntimeError(f"vLLM refused to reset its prefix cache after loading {model_dir}: its cached "
                               "blocks hold the previous weights' keys and values")
        self.eos_ids = _eos_ids(model_dir, self.tokenizer)

    def generate(
        self, prompts: Sequence[str], *, n: int, temperature: float, max_new_tokens: int, seed: int,
        stop: Sequence[str] = (), offsets: Mapping[str, int] | None = None,
    ) -> list[list[Completion]]:
        check_sampling_args(n, temperature, max_new_tokens)
        from vllm import SamplingParams

        # vLLM samples greedily below temperature 1e-5 and then refuses n > 1: decode once, copy.
        greedy = temperature < 1e-5
        stop_ids = self.eos_ids | stop_token_ids(self.tokenizer, stop)
        words = [word for word in stop if word not in self.tokenizer.get_added_vocab()]
        seen: Counter[str] = Counter(offsets or {})
        params = []
        for prompt in prompts:
            params.append(
                SamplingParams(
                    n=1 if greedy else n,
                    temperature=temperature,
                    max_tokens=max_new_tokens,
                    seed=request_seed(seed, prompt, seen[prompt]),
                    stop_token_ids=sorted(stop_ids),
                    stop=words,  # vLLM needs the text to find them; decoded again below, as HFBackend does
                    detokenize=bool(words),
                )
            )
            seen[prompt] += 1
        # Token ids, not text: the tokenizer could otherwise add a BOS token,
        # which HFBackend (add_special_tokens=False) does not.
        inputs = [{"prompt_token_ids": self.tokenizer.encode(p, add_special_tokens=False)} for p in prompts]
        outputs = self.llm.generate(inputs, params, use_tqdm=False)
        # Not vLLM's incremental ``text``, which drops the bytes of a character cut off by
        # ``max_tokens`` where a full decode writes U+FFFD; its token ids keep the stop token, and
        # those of a stop word run to the token that completed it.
        done = [[finish(self.tokenizer, c.token_ids, stop_ids, words)
                 for c in sorted(out.outputs, key=lambda c: c.index)] for out in outputs]
        return [row * n for row in done] if greedy else done


class CheckpointReload:
    """vLLM worker extension (``worker_extension_cls``; its methods run in each worker, reached by
    ``LLM.collective_rpc``): another checkpoint of the same model loaded in place.

    ``Worker.reload_weights(weights_path=)`` reads the checkpoint with the engine's loader and sharding
    and re-processes each layer it loads (``vllm/model_executor/model_loader/reload``). A layer whose
    weight is tied to another's (the LM head of a model with tied embeddings: Qwen3 up to 4B, Llama 3.2)
    loads nothing of its own, so it is not re-processed; on vLLM's CPU build that processing packs the
    head's weight into a GEMM handle of its own (``dispatch_cpu_unquantized_gemm``), and the head kept
    the old checkpoint's: the completions came from neither checkpoint
    (``tests/generation/test_vllm.py::test_one_engine_samples_each_snapshot_of_a_curve``). Every layer of
    a tied weight is re-processed here from the weight as loaded (unquantized processing repeats
    cleanly: on the CPU it packs the weight again, where it keeps no copy, as on CUDA, it does nothing);
    vLLM's own reload would be the place to do it, for every tied layer."""

    def load_checkpoint(self, model_dir: str) -> None:
        from vllm.config import set_current_vllm_config

        self.reload_weights(weights_path=model_dir)
        owners: dict[int, list] = {}
        for module in self.model_runner.get_model().modules():
            weight = module._parameters.get("weight")
            if weight is not None and hasattr(module, "quant_method"):
                owners.setdefault(id(weight), []).append(module)
        with set_current_vllm_config(self.vllm_config):
            for module in (module for tied in owners.values() if len(tied) > 1 for module in tied):
                module.quant_method.process_weights_after_loading(module)


def _eos_ids(model_dir: str | os.PathLike, tokenizer) -> set[int]:
    """The eos ids of the model's ``generation_config`` (if any) and the tokenizer's: vLLM stops at all."""
    from transformers import GenerationConfig

    try:
        eos = GenerationConfig.from_pretrained(model_dir).eos_token_id
    except OSError:  # no generation_config.json
        eos = None
    ids = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids
