"""The sampling interface every generation backend implements, and the registry.

A backend turns prompts into ``n`` sampled completions each::

    backend = get_backend("hf", "resources/toy-base", batch_size=64)
    completions = backend.generate(prompts, n=8, temperature=0.7, max_new_tokens=128, seed=0, stop=["\n\nQ:"])
    # completions[i][j]: sample j for prompts[i], a ``fpa.generation.stops.Completion``: its text
    # (without prompt, eos and stop word) and why it ended (finish_reason "stop" / "length")

The arguments map one to one onto vLLM's
``SamplingParams(n=n, temperature=temperature, max_tokens=max_new_tokens, seed=..., stop=...)``,
so a ``"vllm"`` backend is one more module and one more ``BACKENDS`` entry.

Determinism contract (what every backend must document it meets):
  * the same call (model, prompts, n, temperature, max_new_tokens, seed and
    backend options) returns the same completions;
  * ``temperature == 0`` is greedy decoding, and then ``n`` identical copies.
  * a prompt's completions depend only on (prompt, its occurrence in the call,
    seed), not on the call's other prompts, so a call split into shards (with
    ``offsets``) returns the same completions (``fpa.generation.shards``).
Backends that also guarantee independence of batching say so (``HFBackend``
seeds one generator per (prompt, occurrence, sample index)).
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Callable, Mapping, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:
    from fpa.generation.stops import Completion

# name -> "module:class"; imported lazily so that optional engines (vLLM) are
# needed only when chosen.
BACKENDS = {
    "hf": "fpa.generation.hf:HFBackend",
    "vllm": "fpa.generation.vllm:VLLMBackend",
}


@runtime_checkable
class GenerationBackend(Protocol):
    def generate(
        self,
        prompts: Sequence[str],
        *,
        n: int,
        temperature: float,
        max_new_tokens: int,
        seed: int,
        stop: Sequence[str] = (),
        offsets: Mapping[str, int] | None = None,
    ) -> list[list[Completion]]:
        """``n`` completions per prompt, in prompt order, each cut before its eos and before the
        first of the ``stop`` words, with its finish reason (``fpa.generation.stops``).

        ``offsets[p]``: how often prompt ``p`` occurred in earlier shards of the same
        logical call (``fpa.generation.shards``); its occurrences here count on from there.
        """
        ...

    def load_weights(self, model_dir: str | os.PathLike) -> None:
        """Replace the weights by those of checkpoint ``model_dir`` (same architecture and tokenizer,
        e.g. a run's next snapshot), keeping the engine: its device placement, caches and workers."""
        ...


def check_sampling_args(n: int, temperature: float, max_new_tokens: int) -> None:
    """The range checks every backend applies before sampling."""
    if n < 1:
        raise ValueError(f"n: expected >= 1, got {n}")
    if temperature < 0:
        raise ValueError(f"temperature: expected >= 0 (0 = greedy), got {temperature}")
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens: expected >= 1, got {max_new_tokens}")


def get_backend(name: str, model_dir: str | os.PathLike, **options) -> GenerationBackend:
    """Instantiate backend ``name`` on the model in ``model_dir``; ``options`` go to its constructor."""
    if name not in BACKENDS:
        raise ValueError(f"generation backend: expected one of {sorted(BACKENDS)}, got {name!r}")
    module, attr = BACKENDS[name].split(":")
    backend_cls = getattr(importlib.import_module(module), attr)
    return backend_cls(model_dir, **options)


class Engine:
    """A job's one generation engine, for every checkpoint the job samples: built on the first
    checkpoint's first ``generate``, then each later checkpoint's weights are loaded into it
    (the backend's ``load_weights``), so a curve of 22 snapshots starts one engine, not 22 (a vLLM
    start is a minute or more). ``build(model_dir, **options)`` makes the backend; the
    ``options`` (e.g. vLLM's ``max_model_len``) are fixed at the build."""

    def __init__(self, build: Callable[..., GenerationBackend]):
        self._build = build
        self._backend: GenerationBackend | None = None
        self._options: dict = {}
        self._model_dir: str | None = None

    def on(self, model_dir: str | os.PathLike, **options) -> LazyBackend:
        """The engine on checkpoint ``model_dir``, loaded at its first ``generate``."""
        return LazyBackend(self, str(model_dir), options)

    def serve(self, model_dir: str, options: dict) -> GenerationBackend:
        """The backend with ``model_dir``'s weights: built, reloaded or as it is."""
        if self._backend is None:
            self._backend, self._options = self._build(model_dir, **options), options
        elif options != self._options:
            raise ValueError(f"{model_dir}: the job's engine was built with {self._options}, this checkpoint "
                             f"needs {options}")
        elif model_dir != self._model_dir:
            self._backend.load_weights(model_dir)
        self._model_dir = model_dir
        return self._backend


class LazyBackend:
    """A job's ``Engine`` on one checkpoint, loaded on its first ``generate`` call, so that a job
    whose shards are all finished never loads the model (an engine start is minutes for a large model)."""

    def __init__(self, engine: Engine, model_dir: str, options: dict):
        self._engine, self._model_dir, self._options = engine, model_dir, options

    def generate(self, prompts: Sequence[str], **sampling) -> list[list[Completion]]:
        return self._engine.serve(self._model_dir, self._options).generate(prompts, **sampling)
