"""The loss head's precision and speed, the reference cache on the device, and generation throughput.

- Head: ``fpa.training.head.token_statistics`` at one micro-batch's completion tokens N, the
  model's d and V, forward + backward with the trainer's chunk size, called as the trainer calls
  it: FPA's (fp32 policy states and head, the reference's states in the cache's bf16, its head as
  ``ReferenceCache.head_weight`` loads it and the cache's ``ref_lse``, so no logsumexp of h_ref) and
  Off-RL's (no reference), with each ``head_precision``: fp32, TF32 and bf16 products; FPA's against
  a float64 run of the same function: per-token log π_θ and log π̂_λ, and FPA's per-sequence weight
  π̂_λ(y|x)^(1/|y|).
- Cache: ``fpa.reference.cache.write_reference_cache`` of the same samples on the device and on
  the CPU, every stored quantity compared.
- Generation: ``fpa.generation.decode.SlotDecoder`` (what ``HFBackend`` runs) on a bf16 model built
  on the device, at ``HFBackend``'s default batch size and config/config.yaml's, after a warm-up:
  two rows per slot, prompts of uneven lengths, stop ids that end a row after about a quarter of the
  paper's max_new_tokens on average (a random model draws about uniformly, so ~V / mean of the ids stop
  it; lengths then are about geometric, a few reaching the cap), and as many slots as fit the GPU
  (``fpa.generation.slot_cache.slots_that_fit``: 256 slots of 2,304 positions need ~87 GB of cache).
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path

import torch
import yaml

from gpu.clock import paired_rounds, ratio_spread, timed_step
from gpu.models import ROOT, Shape, build_model, problem_samples
from shared.rounds import spread



def _head_inputs(shape: Shape, device, seed: int = 0) -> dict:
    a = shape.architecture
    g = torch.Generator(device=device).manual_seed(seed)
    n, d, v = shape.completion_tokens, a.hidden_size, a.vocab_size

    def randn(*size, scale=1.0):
        return torch.randn(*size, generator=g, dtype=torch.float64, device=device) * scale

    weight = randn(v, d, scale=0.02)  # HF's initializer_range: logits of std ~ 1
    hidden = randn(n, d)
    ref_hidden = hidden + randn(n, d, scale=0.3)  # rounded to bf16 in head_precision, as the cache stores it
    return {"hidden": hidden, "weight": weight, "ref_hidden": ref_hidden,
            "ref_weight": weight + randn(v, d, scale=0.005),
            "targets": torch.randint(0, v, (n,), generator=g, device=device), "grad": randn(n)}


def _fpa_weights(hat_logp: torch.Tensor, sequences: int) -> torch.Tensor:
    from fpa.objectives.offrl import sequence_weight

    per_sequence = hat_logp.double().view(sequences, -1)
    return sequence_weight(per_sequence.sum(1), torch.full((sequences,), per_sequence.shape[1], dtype=torch.float64,
                                                            device=per_sequence.device))


def _logsumexp(hidden: torch.Tensor, weight: torch.Tensor, chunk: int) -> torch.Tensor:
    """logsumexp(hidden·Wᵀ) [N] in W's dtype, ``chunk`` rows at a time: the reference cache's ``ref_lse``."""
    return torch.cat([(hidden[start:start + chunk].to(weight.dtype) @ weight.t()).logsumexp(-1)
                      for start in range(0, len(hidden), chunk)])


def head_precision(shape: Shape, device, lam: float, head_memory_mb: float, reps: int) -> dict:
    """Time (forward + backward) per precision, FPA's call and Off-RL's; FPA's error against float64."""
    from fpa.memory.training import objective_chunk_rows
    from fpa.objectives import get_objective
    from fpa.training.head import token_statistics
    from fpa.precision import HEAD_PRODUCTS as HEAD_PRECISIONS

    x = _head_inputs(shape, device)
    chunks = {method: objective_chunk_rows("auto", head_memory_mb, shape.architecture.vocab_size,
                                           get_objective(method), "cached") for method in ("fpa", "offrl")}
    chunk = chunks["fpa"]  # the trainer's, each method's own
    ref_hidden = x["ref_hidden"].to(torch.bfloat16)  # as cached: float64 and every precision round z_θ alike
    ref_weight = x["ref_weight"].float()  # as ReferenceCache.head_weight loads it
    ref_lse = _logsumexp(ref_hidden, ref_weight, chunk)  # as the cache stores it
    with torch.no_grad():
        exact = token_statistics(x["hidden"], x["weight"], x["targets"], ref_hidden=ref_hidden,
                                 ref_weight=x["ref_weight"], lam=lam, chunk_size=chunk,
                                 ref_logsumexp=_logsumexp(ref_hidden, x["ref_weight"], chunk))
    exact_weights = _fpa_weights(exact.hat_logp, shape.sequences)
    result = {"N": shape.completion_tokens, "d": shape.architecture.hidden_size, "V": shape.architecture.vocab_size,
              "chunk_size": chunk, "offrl_chunk_size": chunks["offrl"], "lam": lam, "ref_logsumexp": "cached", "precisions": {}}
    hidden, weight = (x[name].float().requires_grad_() for name in ("hidden", "weight"))  # decoder_hidden's fp32
    calls = {"fpa": dict(ref_hidden=ref_hidden, ref_weight=ref_weight, ref_logsumexp=ref_lse, lam=lam),
             "offrl": {}}
    for precision in HEAD_PRECISIONS:

        def step(method):
            stats = token_statistics(hidden, weight, x["targets"], chunk_size=chunks[method], head_precision=precision,
                                     **calls[method])
            (stats.logp * x["grad"].float()).sum().backward()
            hidden.grad = weight.grad = None
            return stats

        # a warm-up of each (FPA's values compared), then paired rounds, the order alternated
        timed = paired_rounds({method: functools.partial(step, method) for method in calls}, reps, device)
        stats, seconds = timed["warm_results"]["fpa"], timed["rounds"]
        weights = _fpa_weights(stats.hat_logp, shape.sequences)
        result["precisions"][precision] = {
            "s": spread([e["s"] for e in seconds["fpa"]]), "offrl_s": spread([e["s"] for e in seconds["offrl"]]),
            "ratio_fpa_over_offrl": ratio_spread(seconds, "fpa", "offrl"),
            "max_abs_diff_logp": float((stats.logp.detach().double() - exact.logp).abs().max()),
            "max_abs_diff_hat_logp": float((stats.hat_logp.double() - exact.hat_logp).abs().max()),
            "max_rel_diff_fpa_weight": float(((weights - exact_weights).abs() / exact_weights).max()),
        }
    return result


def _write_cache(model_dir: Path, samples, max_length: int, out: Path, device) -> float:
    from fpa.reference.cache import write_reference_cache
    from fpa.toy.tokenizer import build_tokenizer

    return timed_step(lambda: write_reference_cache(model_dir, samples, build_tokenizer(), out, max_length=max_length,
                                                    device=str(device)), device)["s"]


def cache_devices(shape: Shape, model_dir: Path, work: Path, device, max_length: int) -> dict:
    """The cache of a few samples written on ``device`` and on the CPU: every stored quantity compared."""
    from fpa.reference.cache import ReferenceCache

    samples = problem_samples(shape, 1, seed=1, max_length=max_length)[:2]
    tokens = sum(len(s["prompt"]) + len(s["completion"]) + 1 for s in samples)
    seconds = {name: _write_cache(model_dir, samples, max_length, work / f"cache-{name}", where)
               for name, where in (("device", device), ("cpu", "cpu"))}
    caches = {name: ReferenceCache(work / f"cache-{name}") for name in seconds}
    indices = list(range(len(samples)))
    batches = {name: cache.batch(indices) for name, cache in caches.items()}
    diffs = {}
    for field in ("hidden", "ref_lse", "ref_logp"):
        a, b = (getattr(batches[name], field).double() for name in ("device", "cpu"))
        diffs[field] = {"max_abs": float((a - b).abs().max()), "max_ref": float(b.abs().max())}
    heads = [cache.head_weight() for cache in caches.values()]
    return {"tokens": tokens, "device": str(device), "write_s": seconds,
            "tokens_per_s": {name: tokens / s for name, s in seconds.items()},
            "targets_equal": torch.equal(batches["device"].targets, batches["cpu"].targets),
            "head_equal": torch.equal(*heads), "max_diff": diffs, "storage_dtype": str(batches["cpu"].hidden.dtype)}


def configured_batch_sizes() -> list[int]:
    """``HFBackend``'s default batch size and config/config.yaml's ``generation.batch_size``."""
    from fpa.generation.hf import HFBackend

    default = inspect.signature(HFBackend.__init__).parameters["batch_size"].default
    configured = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())["generation"]["batch_size"]
    return sorted({default, configured})


def generation(shape: Shape, device, batch_sizes: list[int], prompt: int, new_tokens: int,
               temperature: float) -> dict:
    """Tokens/s of the slot decoder per batch size (module docstring: warm-up, uneven lengths, slots that fit)."""
    from fpa.generation.decode import SlotDecoder
    from fpa.generation.slot_cache import slots_that_fit

    model = build_model(shape, device, torch.bfloat16).eval()
    vocabulary, mean = shape.architecture.vocab_size, max(1, new_tokens // 4)
    stop_ids = set(range(2, vocabulary, mean))  # ~V / mean ids: a row stops after ~mean tokens
    g = torch.Generator().manual_seed(0)

    def prompts(rows: int) -> list[list[int]]:
        lengths = torch.randint(prompt // 2, prompt + 1, (rows,), generator=g).tolist()
        return [torch.randint(2, vocabulary, (n,), generator=g).tolist() for n in lengths]

    SlotDecoder(model, slots=2, stop_ids=stop_ids, pad_id=0).run(prompts(2), [0, 1], temperature=temperature,
                                                                  max_new_tokens=min(8, new_tokens))  # warm-up
    result = {"shape": shape.name, "dtype": "bfloat16", "prompt_tokens": prompt, "new_tokens": new_tokens,
              "temperature": temperature, "stop_ids": len(stop_ids), "rows_per_slot": 2, "batch_sizes": {}}
    for size in batch_sizes:
        fit = slots_that_fit(model.config, prompt + new_tokens, torch.bfloat16, torch.device(device))
        slots = size if fit is None else min(size, fit)
        rows = prompts(2 * slots)
        decoder = SlotDecoder(model, slots=slots, stop_ids=stop_ids, pad_id=0)
        timed = timed_step(lambda: decoder.run(rows, list(range(len(rows))), temperature=temperature,
                                               max_new_tokens=new_tokens), device)
        lengths = [len(row) for row in timed["result"]]
        result["batch_sizes"][str(slots)] = {
            "asked": size, "rows": len(rows), "s": timed["s"], "generated_tokens": sum(lengths),
            "tokens_per_s": sum(lengths) / timed["s"], "peak_bytes": timed["peak_bytes"],
            "mean_length": sum(lengths) / len(lengths), "at_cap": sum(n == new_tokens for n in lengths)}
    return result
