"""Data-parallel sampling: a job's GPUs as engine replicas, each on a contiguous share of the prompts.

A sampling job with ``gpu`` GPUs and ``tensor_parallel_size`` T runs ``gpu / T`` replicas of
the backend (a small model fits one GPU: T = 1 and a replica per GPU). Each replica is a
worker process that sees only its T GPUs (``CUDA_VISIBLE_DEVICES``), loads the model once
and serves every ``generate`` call of the job (each shard of ``fpa.generation.shards``).

A call's prompts are split into contiguous shares, each told how often its prompts occurred
before it (``offsets``), and the replicas' answers are concatenated in order. By the
backends' determinism contract (``fpa.generation.backend``: a prompt's completions depend
only on prompt, occurrence and seed) the result is that of one backend's call.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import Counter
from typing import Mapping, Sequence

from fpa.generation.backend import check_sampling_args, get_backend
from fpa.generation.stops import Completion
from fpa.precision import torch_name


def replica_devices(gpus: int, tensor_parallel_size: int, visible: str | None = None) -> list[str]:
    """``CUDA_VISIBLE_DEVICES`` of each replica: consecutive groups of ``tensor_parallel_size`` of the
    job's ``gpus`` devices (``visible``: the job's own list, e.g. SLURM's "4,5"; default 0..gpus-1)."""
    if gpus < 1 or gpus % tensor_parallel_size:
        raise ValueError(f"gpus: expected a positive multiple of tensor_parallel_size ({tensor_parallel_size}), "
                         f"got {gpus}")
    devices = visible.split(",") if visible else [str(i) for i in range(gpus)]
    if len(devices) < gpus:
        raise ValueError(f"CUDA_VISIBLE_DEVICES: the job asked for {gpus} GPUs, {visible!r} shows {len(devices)}")
    return [",".join(devices[i:i + tensor_parallel_size]) for i in range(0, gpus, tensor_parallel_size)]


def split_prompts(prompts: Sequence[str], parts: int, offsets: Mapping[str, int] | None = None
                  ) -> list[tuple[list[str], dict[str, int]]]:
    """``parts`` contiguous shares of ``prompts`` (sizes differ by at most one), each with the
    ``offsets`` a backend needs to sample it as the rest of one call."""
    seen = Counter(offsets or {})
    shares = []
    for part in range(parts):
        share = list(prompts[round(part * len(prompts) / parts):round((part + 1) * len(prompts) / parts)])
        shares.append((share, dict(seen)))
        seen.update(share)
    return shares


class DataParallelBackend:
    """``GenerationBackend`` over one worker process per replica of backend ``name``.

    ``devices``: each worker's ``CUDA_VISIBLE_DEVICES`` (None: inherit, e.g. CPU tests);
    ``options``: the backend's constructor options. Workers are not daemons (vLLM starts
    processes of its own) and stop at ``close`` or when this process ends.
    """

    def __init__(self, name: str, model_dir: str | os.PathLike, devices: Sequence[str | None], **options):
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: CUDA is not initialised yet
        self.connections, self.workers = [], []
        for visible in devices:
            parent, child = context.Pipe()
            worker = context.Process(target=_serve, args=(child, visible, name, str(model_dir), options))
            worker.start()
            self.connections.append(parent)
            self.workers.append(worker)

    def generate(self, prompts: Sequence[str], *, n: int, temperature: float, max_new_tokens: int, seed: int,
                 stop: Sequence[str] = (), offsets: Mapping[str, int] | None = None) -> list[list[Completion]]:
        check_sampling_args(n, temperature, max_new_tokens)
        shares = split_prompts(prompts, len(self.workers), offsets)
        sampling = dict(n=n, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed, stop=list(stop))
        for connection, (share, share_offsets) in zip(self.connections, shares):
            connection.send(("generate", (share,), {**sampling, "offsets": share_offsets}))
        return [completion for answer in self._answers() for completion in answer]

    def load_weights(self, model_dir: str | os.PathLike) -> None:
        """Every replica loads checkpoint ``model_dir`` into its running engine."""
        for connection in self.connections:
            connection.send(("load_weights", (str(model_dir),), {}))
        self._answers()

    def _answers(self) -> list:
        """Each replica's answer, in replica order; every replica works while we wait on the first."""
        answers = []
        for connection in self.connections:
            status, value = connection.recv()
            if status == "error":
                raise RuntimeError(f"data-parallel replica failed: {value}")
            answers.append(value)
        return answers

    def close(self) -> None:
        for connection in self.connections:
            connection.send(None)
        for worker in self.workers:
            worker.join()

    def __del__(self):
        for worker in getattr(self, "workers", ()):
            if worker.is_alive():
                worker.terminate()


def _serve(connection, visible: str | None, name: str, model_dir: str, options: dict) -> None:
    """A replica: its devices, one backend, then each request, ``(method, args, kwargs)`` of its
    ``generate`` or ``load_weights``, until None."""
    if visible is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = visible
    try:
        backend = get_backend(name, model_dir, **options)
    except Exception as error:  # reported on the first request, where the caller waits
        backend, failure = None, f"{type(error).__name__}: {error}"
    while (request := connection.recv()) is not None:
        if backend is None:
            connection.send(("error", failure))
            continue
        method, args, kwargs = request
        try:
            connection.send(("ok", getattr(backend, method)(*args, **kwargs)))
        except Exception as error:
            connection.send(("error", f"{type(error).__name__}: {error}"))


def make_backend(generation: dict, model_dir: str, gpus: int = 1, max_model_len: int | None = None):
    """The configured generation backend on ``model_dir``, with its own options; vLLM on a job of
    more GPUs than one engine's ``tensor_parallel_size`` runs an engine per group of them.
    ``max_model_len``: vLLM's context length (``fpa.generation.model_len``). ``HFBackend`` runs on
    the job's GPU where it has one, in bfloat16 there (as vLLM's dtype "auto" runs a float32
    checkpoint), else on the CPU in float32."""
    logging.getLogger(__name__).info("loading %s with the %s backend", model_dir, generation["backend"])
    if generation["backend"] != "vllm":
        import torch

        cuda = torch.cuda.is_available()
        placement = dict(device="cuda" if cuda else "cpu", dtype=torch_name("bf16" if cuda else "fp32"))
        logging.getLogger(__name__).info("HF backend on %(device)s in %(dtype)s", placement)
        return get_backend(generation["backend"], model_dir, batch_size=generation["batch_size"], **placement)
    engine = dict(tensor_parallel_size=generation["tensor_parallel_size"], max_model_len=max_model_len)
    if gpus <= engine["tensor_parallel_size"]:
        return get_backend("vllm", model_dir, **engine)
    devices = replica_devices(gpus, engine["tensor_parallel_size"], os.environ.get("CUDA_VISIBLE_DEVICES"))
    logging.getLogger(__name__).info("%d vLLM engines (data parallel) on GPUs %s", len(devices), devices)
    return DataParallelBackend("vllm", model_dir, devices, **engine)
