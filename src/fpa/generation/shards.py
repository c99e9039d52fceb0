"""Resumable generation: a long sampling job keeps the shards it finished.

``generate_sharded`` splits the prompt list into consecutive shards of about
``shard_rows`` (prompt, sample) rows, generates them one by one and writes each
finished shard atomically into a work directory::

    work/manifest.json        {"key": <sha256>, "parts": {...}}: what the shards depend on
    work/shard-00000.json     {"key", "start", "stop", "prompts_sha256", "completions"}
    work/shard-00001.json     ...

The key is the sha256 of everything the completions depend on: the caller's parts
(model and input file hashes, config slice, code fingerprint) plus the prompts,
the sampling arguments, the backend class and the shard size. A re-run with the
same key loads the shards already there and generates only the others; shards of
any other key are deleted, never mixed in.

The result equals one uninterrupted ``backend.generate`` call on the whole list:
backends seed each (prompt, occurrence of the prompt, sample) independently of
the call's other prompts, and each shard is told how often its prompts occurred
in earlier shards (``offsets``). The work directory is not a Snakemake output
(Snakemake deletes the outputs of a failed job). ``fpa sample`` removes it once its
output is written (``remove_work``); ``fpa evaluate`` and ``fpa generate`` keep one
per benchmark, so that re-running a checkpoint's evaluation after one benchmark
changed regenerates only that benchmark.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections import Counter
from pathlib import Path
from typing import Mapping, Sequence

from fpa.generation.stops import Completion
from fpa.io import read_json, write_json

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
#: Default shard size in (prompt, sample) rows: small enough to lose little work
#: when a job is killed, large enough to keep a vLLM engine's batch full.
SHARD_ROWS = 4096


def _sha256_json(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def shard_bounds(n_prompts: int, prompts_per_shard: int) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(n_prompts)`` in shards of ``prompts_per_shard``."""
    if prompts_per_shard < 1:
        raise ValueError(f"prompts_per_shard: expected >= 1, got {prompts_per_shard}")
    return [(start, min(start + prompts_per_shard, n_prompts)) for start in range(0, n_prompts, prompts_per_shard)]


def _shard_path(work: Path, index: int) -> Path:
    return work / f"shard-{index:05d}.json"


def _open_work(work: Path, key: str, parts: Mapping) -> None:
    """Make ``work`` hold only shards of ``key``: anything of another key is removed."""
    manifest = work / MANIFEST
    if manifest.exists():
        try:
            previous = read_json(manifest).get("key")
        except (OSError, ValueError):
            previous = None
        if previous == key:
            return
        log.info("%s: shards of another key (%s, this job: %s) are discarded", work, str(previous)[:16], key[:16])
    work.mkdir(parents=True, exist_ok=True)
    for stale in work.glob("shard-*.json"):  # of another key, or without a manifest: not trusted
        stale.unlink()
    write_json(manifest, {"key": key, "parts": parts})


def _load_shard(path: Path, key: str, start: int, stop: int, prompts_sha256: str,
                n: int) -> list[list[Completion]] | None:
    """The completions of a finished shard, or None if it is missing or not this job's."""
    if not path.exists():
        return None
    try:
        shard = read_json(path)
    except (OSError, ValueError):
        return None
    completions = shard.get("completions")
    if (shard.get("key"), shard.get("start"), shard.get("stop"), shard.get("prompts_sha256")) != (
        key, start, stop, prompts_sha256
    ) or not isinstance(completions, list) or len(completions) != stop - start:
        log.warning("%s: not a shard of this job; generating it again", path)
        return None
    if any(len(row) != n for row in completions):
        return None
    try:
        return [[Completion.from_json(c) for c in row] for row in completions]
    except (TypeError, KeyError):
        log.warning("%s: completions without their finish reasons; generating it again", path)
        return None


def generate_sharded(
    backend,
    prompts: Sequence[str],
    *,
    n: int,
    temperature: float,
    max_new_tokens: int,
    seed: int,
    work_dir: str | os.PathLike | None,
    key_parts: Mapping,
    shard_rows: int = SHARD_ROWS,
    stop_words: Sequence[str] = (),
) -> list[list[Completion]]:
    """``backend.generate(prompts, ...)``, resumable through the shards in ``work_dir``.

    ``key_parts``: what else the completions depend on (model and input hashes, config
    slice, code fingerprint); JSON-serialisable. With ``work_dir=None`` this is one
    plain call.
    """
    sampling = dict(n=n, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed, stop=list(stop_words))
    if work_dir is None:
        return backend.generate(list(prompts), **sampling)
    if shard_rows < 1:
        raise ValueError(f"shard_rows: expected >= 1, got {shard_rows}")
    work = Path(work_dir)
    per_shard = max(1, shard_rows // n)
    parts = {
        **key_parts,
        "sampling": sampling,
        "prompts_sha256": _sha256_json(list(prompts)),
        "backend": f"{type(backend).__module__}.{type(backend).__qualname__}",
        "prompts_per_shard": per_shard,
    }
    key = _sha256_json(parts)
    _open_work(work, key, parts)
    completions: list[list[Completion]] = []
    seen: Counter[str] = Counter()
    bounds = shard_bounds(len(prompts), per_shard)
    resumed = 0
    for index, (start, stop) in enumerate(bounds):
        shard_prompts = list(prompts[start:stop])
        shard_sha = _sha256_json(shard_prompts)
        path = _shard_path(work, index)
        done = _load_shard(path, key, start, stop, shard_sha, n)
        if done is None:
            done = backend.generate(shard_prompts, **sampling, offsets=dict(seen))
            write_json(path, {"key": key, "start": start, "stop": stop, "prompts_sha256": shard_sha,
                              "completions": [[c.to_json() for c in row] for row in done]})
            log.info("shard %d/%d: prompts %d-%d generated", index + 1, len(bounds), start, stop - 1)
        else:
            resumed += 1
        completions.extend(done)
        seen.update(shard_prompts)
    if resumed:
        log.info("resumed %d of %d shards from %s", resumed, len(bounds), work)
    return completions


def remove_work(work_dir: str | os.PathLike | None) -> None:
    """Delete a finished job's work directory, and its parent if that is left empty."""
    if work_dir is None:
        return
    work = Path(work_dir)
    shutil.rmtree(work, ignore_errors=True)
    if work.parent.name == "work":  # e.g. results/eval/<model>/<method>/<seed>/work/ after its last bench
        try:
            work.parent.rmdir()
        except OSError:  # other jobs' work directories are still there
            pass
