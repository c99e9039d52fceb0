"""Provenance sidecars: every output ``X`` gets ``X.prov.json``.

A record names the rule, the exact config slice, each input with its sha256, the
output's own sha256, the code fingerprint, the project version (git commit + dirty
flag), package versions, host and start/end times. Inputs that are outputs of other
rules have sidecars of their own, so a chain can be walked back from any file.

``Job.output(path)`` wraps ``fpa.io.atomic_path``: the output is written to a
temporary path, hashed, its sidecar written, and only then renamed into place, so
an output never exists without its record. ``remove_leftovers`` (the workflow's onstart
hook) removes the records whose output Snakemake deleted after a failed job. A record is the
record of the file it sits beside only where its output path names that file (``describes``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import importlib.metadata
import json
import logging
import os
import platform
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, Mapping

from fpa.io import atomic_path, read_json, remove_stale_temps, sha256_path, temps_of, write_json
from fpa.numerics import numerics_record
from fpa.provenance.cpu import cpu_facts
from fpa.safe_load import parse_json

SIDECAR_SUFFIX = ".prov.json"
TRACKED_PACKAGES = ("fpa-bench", "torch", "transformers", "accelerate", "tokenizers", "safetensors",
                    "snakemake", "pandas", "trl", "vllm", "math-verify", "evalplus", "bigcodebench")
PROJECT_ROOT = Path(__file__).resolve().parents[3]
log = logging.getLogger(__name__)


def sidecar_of(path: str | os.PathLike) -> Path:
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def project_version() -> dict:
    """git commit and dirty flag of the checkout the package runs from ("unknown" outside git)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(PROJECT_ROOT), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": dirty}


def package_versions() -> dict:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


def describe_inputs(inputs: Mapping[str, str | os.PathLike]) -> dict:
    described = {}
    for name, path in inputs.items():
        if not Path(path).exists():
            raise ValueError(f"input {name}: {path} does not exist")
        described[name] = {"path": str(path), "sha256": sha256_path(path)}
    return described


def usage_since(clock_start: float) -> dict:
    """What a job has cost so far: wall seconds since ``clock_start`` (``time.perf_counter``), CPU
    seconds of the process and its finished children (torchrun ranks, grader pools), and GPU
    seconds as the paper counts GPU hours: wall time × the GPUs the job holds; a job that computed
    on a GPU adds its name and the largest peak of ``torch.cuda.max_memory_allocated`` over them."""
    wall = time.perf_counter() - clock_start
    cpu = sum(resource.getrusage(who).ru_utime + resource.getrusage(who).ru_stime
              for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    torch = sys.modules.get("torch")  # a job that never imported torch holds no GPU
    gpus = torch.cuda.device_count() if torch is not None and torch.cuda.is_available() else 0
    usage = {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "gpus": gpus, "gpu_s": round(wall * gpus, 3)}
    if gpus and torch.cuda.is_initialized():  # the job computed on its GPUs: where, and their peak
        usage["device"] = torch.cuda.get_device_name(0)
        usage["gpu_peak_bytes"] = max(torch.cuda.max_memory_allocated(i) for i in range(gpus))
    return usage


#: How a command states its whole cost as the last line of its log (``fpa.cli``): the cost table
#: reads it there (``fpa.aggregation.cost``), as Snakemake samples CPU time too rarely.
USAGE_PREFIX = "fpa usage: "


def usage_line(clock_start: float) -> str:
    return USAGE_PREFIX + json.dumps(usage_since(clock_start), sort_keys=True)


def last_logged_usage(log_text: str) -> dict | None:
    """The last usage line of a log (a job of several processes logs one per process; the
    launcher, which waits for the others, last), or None."""
    lines = [line for line in log_text.splitlines() if line.startswith(USAGE_PREFIX)]
    return parse_json(lines[-1][len(USAGE_PREFIX):], "usage line") if lines else None


# the fields every record has (Job.output); anything else is what the job itself recorded
RECORD_FIELDS = frozenset({"rule", "output", "config", "inputs", "code_fingerprint", "project", "packages",
                           "numerics", "cpu", "host", "command", "started", "finished", "usage"})


class Job:
    """One CLI invocation of a rule: collects what its outputs' sidecars record."""

    def __init__(self, rule: str, config: object, inputs: Mapping[str, str | os.PathLike], code: str | None = None,
                 *, described: Mapping[str, dict] | None = None):
        """``described``: inputs already hashed by ``describe_inputs`` (shared by several jobs of
        one command, e.g. a checkpoint evaluated on several benchmarks)."""
        self.rule = rule
        self.config = config
        self.inputs = {**(described or {}), **describe_inputs(inputs)}
        self.code = code
        self.started = _now()
        self.clock_start = time.perf_counter()
        self.extra: dict = {}

    @contextlib.contextmanager
    def output(self, path: str | os.PathLike, *, directory: bool = False, **extra) -> Iterator[Path]:
        """Yield a temp path; on success hash it, write ``path.prov.json``, rename into ``path``."""
        with atomic_path(path, directory=directory) as tmp:
            yield tmp
            record = {
                "rule": self.rule,
                "output": {"path": str(path), "sha256": sha256_path(tmp)},
                "config": self.config,
                "inputs": self.inputs,
                "code_fingerprint": self.code,
                "project": project_version(),
                "packages": package_versions(),
                "numerics": numerics_record(),
                "cpu": cpu_facts(),
                "host": socket.gethostname(),
                "command": sys.argv,
                "started": self.started,
                "finished": _now(),
                "usage": usage_since(self.clock_start),
                **self.extra,
                **extra,
            }
            write_json(sidecar_of(path), record)


def workdir_of(record: dict, path: str | os.PathLike) -> Path | None:
    """The directory the job that wrote ``record`` ran in (the workflow's), as found from ``path``, the
    file the record describes: ``path`` made absolute, less the output path the record names relative
    to that directory (an absolute one: the current directory, where it names ``path``). None where
    ``path`` is not where the record's output is: a file and sidecar copied or moved elsewhere, whose
    config, inputs and hash are another file's. Paths compare as written, not through symlinks, so a
    link to another run's file is not that file."""
    recorded = Path(os.path.normpath(record["output"]["path"]))
    actual = Path(os.path.abspath(path))
    if recorded.is_absolute():
        return Path.cwd() if recorded == actual else None
    depth = len(recorded.parts)
    return Path(*actual.parts[:-depth]) if actual.parts[-depth:] == recorded.parts else None


def describes(record: dict, path: str | os.PathLike, workdir: Path) -> bool:
    """Whether ``record`` is the record of the file at ``path``, its job having run in ``workdir``."""
    return Path(os.path.abspath(workdir / record["output"]["path"])) == Path(os.path.abspath(path))


def record_in(sidecar: Path) -> dict | None:
    """The record a file named as a sidecar holds, if it is one: a JSON object whose output is the file
    beside it. None for anything else, e.g. an output whose own name ends in ``SIDECAR_SUFFIX`` (a
    benchmark named ``x.prov``: its evaluation ``x.prov.json`` holds no record of ``x``)."""
    if not sidecar.name.endswith(SIDECAR_SUFFIX) or sidecar.is_symlink() or not sidecar.is_file():
        return None
    try:
        record = read_json(sidecar)
        output = sidecar.with_name(sidecar.name[: -len(SIDECAR_SUFFIX)])
        return record if workdir_of(record, output) is not None else None
    except (ValueError, OSError, TypeError, KeyError):  # not JSON, not an object, no output path
        return None


def remove_leftovers(*roots: str | os.PathLike) -> list[Path]:
    """Remove under ``roots`` what killed and failed jobs left: temporaries of writers no longer running
    (``fpa.io.remove_stale_temps``), and records whose output is gone (Snakemake deletes a failed job's
    outputs, not their records) unless a writer of that output is still running. Only what the project
    left goes: a temporary holds ``atomic_path``'s mark, and a record names the output beside it
    (``record_in``), which no name of a config gives a user's output. Returns what it removed."""
    removed = []
    for root in map(Path, roots):
        if not root.is_dir():
            continue
        for directory, _, _ in os.walk(root):
            removed += remove_stale_temps(directory)
        for sidecar in sorted(root.rglob("*" + SIDECAR_SUFFIX)):
            output = sidecar.with_name(sidecar.name[: -len(SIDECAR_SUFFIX)])
            if output.exists() or output.is_symlink() or temps_of(output.parent, output.name):
                continue
            if record_in(sidecar) is not None:
                sidecar.unlink(missing_ok=True)
                log.warning("removed %s, the record of an output that is gone", sidecar)
                removed.append(sidecar)
    return removed


def read_record(path: str | os.PathLike) -> dict | None:
    sidecar = sidecar_of(path)
    return read_json(sidecar) if sidecar.exists() else None
