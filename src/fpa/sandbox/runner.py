"""``Sandbox``: run untrusted programs (argv or Python source) and collect a ``RunResult``.

Every run gets a fresh tmpfs work dir (/sandbox), its own uid, fresh namespaces and
rlimits; see ``fpa.sandbox.bwrap`` for the exact command line. The run's total memory
and process count are bounded by the mechanism ``fpa.sandbox.bound`` finds here (a cgroup,
else a watchdog), in both modes. ``mode="none"`` runs the same program unsandboxed
(rlimits, the total bound and the wall clock only) and warns loudly.
"""

from __future__ import annotations

import functools
import itertools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path, PurePosixPath
from typing import Callable, Mapping, Sequence

from fpa.sandbox import bound, bwrap, janitor
from fpa.sandbox.check import SandboxUnavailable, missing_prerequisite, userns_hint
from fpa.sandbox.limits import InputTooLarge, Limits, RunResult
from fpa.sandbox.process import wait_group
from fpa.sandbox.stage import Staging

log = logging.getLogger("fpa.sandbox")
MODES = ("bwrap", "none")
SCRIPT = "main.py"
UNSANDBOXED_WARNING = "fpa.sandbox: mode='none' runs model-generated code UNSANDBOXED on this machine"
_counter = itertools.count()
_counter_lock = threading.Lock()


class Sandbox:
    """Run programs under ``limits``; ``python`` is the interpreter used inside; ``aggregate``
    forces one mechanism of ``fpa.sandbox.bound.BOUNDS`` (default: the first that works here)."""

    def __init__(self, limits: Limits | None = None, *, mode: str = "bwrap", python: str = sys.executable,
                 checked: bool = False, aggregate: str | None = None) -> None:  # fmt: skip
        if mode not in MODES:
            raise ValueError(f"Sandbox.mode: expected one of {list(MODES)}, got {mode!r}")
        self.limits = limits or Limits()
        self.mode = mode
        self.python = str(python)
        self.aggregate = bound.choose(aggregate)
        if mode == "none":
            warnings.warn(UNSANDBOXED_WARNING, RuntimeWarning, stacklevel=2)
            log.warning(UNSANDBOXED_WARNING)
            return
        if not checked:  # ``checked`` is for the probe itself
            check_sandbox(self.python)
        if os.geteuid() == 0 and (stuck := janitor.kill_stuck_bwrap()):
            log.warning("fpa.sandbox: killed %d bwrap processes orphaned by earlier runs: %s", len(stuck), stuck)
        self._roots = bwrap.python_roots(self.python)
        hidden = [root for root in self._roots if os.geteuid() == 0 and bwrap.needs_staging(root)]
        self._staging = Staging(hidden) if hidden else None

    def run_python(self, source: str, *, stdin: str | bytes | None = None, args: Sequence[str] = (),
                   files: Mapping[str, str | bytes] | None = None, timeout_s: float | None = None,
                   env: Mapping[str, str] | None = None,
                   on_stdout: Callable[[bytes], bytes | None] | None = None) -> RunResult:  # fmt: skip
        """Run ``source`` as ``python main.py *args`` in the work dir, next to ``files``."""
        files = dict(files or {})
        if SCRIPT in files:
            raise ValueError(f"files: {SCRIPT!r} is reserved for the program source")
        files[SCRIPT] = source
        argv = [self.python, SCRIPT, *args]
        return self.run(argv, stdin=stdin, files=files, timeout_s=timeout_s, env=env, on_stdout=on_stdout)

    def run(self, argv: Sequence[str], *, stdin: str | bytes | None = None,
            files: Mapping[str, str | bytes] | None = None, timeout_s: float | None = None,
            env: Mapping[str, str] | None = None,
            on_stdout: Callable[[bytes], bytes | None] | None = None) -> RunResult:  # fmt: skip
        """Run ``argv`` with cwd = the work dir holding ``files`` (name -> content). ``on_stdout``, if
        given, is called with each chunk of stdout as it comes; what it returns goes to the program's
        stdin, which stays open until the run ends (``fpa.sandbox.process.wait_group``)."""
        if isinstance(argv, (str, bytes)) or not argv:
            raise ValueError(f"argv: expected a non-empty list of strings, got {argv!r}")
        contents = {_check_name(name): _as_bytes(data) for name, data in (files or {}).items()}
        self._check_sizes(contents)
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        if timeout <= 0:
            raise ValueError(f"timeout_s: expected a number > 0, got {timeout!r}")
        stdin_bytes = (b"" if on_stdout else None) if stdin is None else _as_bytes(stdin)
        run = self._run_bwrap if self.mode == "bwrap" else self._run_unsandboxed
        start = time.monotonic()
        guard = self.aggregate.start(self.limits)
        try:
            done = run(list(argv), contents, stdin_bytes, timeout, bwrap.sandbox_env(self.python, env), guard, on_stdout)
        finally:
            guard.close()
        wall = time.monotonic() - start
        signum = _signal_of(done.returncode, self.mode)
        return RunResult(
            returncode=-signum if signum else done.returncode,
            stdout=done.stdout.decode("utf-8", errors="replace"),
            stderr=done.stderr.decode("utf-8", errors="replace"),
            timed_out=done.timed_out,
            killed_by_signal=signum,
            wall_s=wall,
            stdout_truncated=done.stdout_truncated,
            stderr_truncated=done.stderr_truncated,
            memory_exceeded=done.memory_exceeded,
            memory_peak_bytes=done.memory_peak_bytes,
        )

    def _check_sizes(self, contents: Mapping[str, bytes]) -> None:
        """Inputs that cannot fit would make bwrap itself fail, which looks like a program failure."""
        fsize, tmpfs = self.limits.fsize_bytes, self.limits.tmpfs_bytes
        for name, data in contents.items():
            if len(data) > fsize:
                raise InputTooLarge(f"files: {name!r} has {len(data)} bytes, over Limits.fsize_bytes={fsize}")
        total = sum(len(data) for data in contents.values())
        if total > tmpfs // 2:
            raise InputTooLarge(f"files: {total} bytes in all, over half of Limits.tmpfs_bytes={tmpfs}")

    def command(self, argv: Sequence[str], *, uid: int, file_fds: Mapping[str, int],
                env: Mapping[str, str], status_fd: int | None = None) -> list[str]:  # fmt: skip
        """The full command line of one run (for logging and tests)."""
        staged = self._staging.mountpoints if self._staging else {}
        roots = {root: staged.get(root, root) for root in self._roots}
        privileged = os.geteuid() == 0
        extra_nproc = 0 if privileged else _processes_of(os.getuid())
        return [
            *bwrap.rlimit_args(self.limits, extra_nproc=extra_nproc),
            *(self._staging.args() if self._staging else []),
            *(bwrap.setpriv_args(uid) if privileged else []),
            *bwrap.bwrap_args(roots=roots, file_fds=file_fds, env=env, limits=self.limits, status_fd=status_fd),
            *argv,
        ]

    def _run_bwrap(self, argv, contents, stdin, timeout, env, guard, on_stdout):
        uid = _next_uid()
        files = {**bwrap.etc_files(uid), **{f"{bwrap.WORKDIR}/{name}": data for name, data in contents.items()}}
        fds = {dest: _memfd(dest, data) for dest, data in files.items()}
        status_r, status_w = os.pipe()
        try:
            cmd = self.command(argv, uid=uid, file_fds=fds, env=env, status_fd=status_w)
            proc = _popen([*guard.prefix, *cmd], stdin, pass_fds=(*fds.values(), status_w), cwd="/", env=env)
            guard.attach(proc.pid)
        except BaseException:
            os.close(status_r)
            raise
        finally:
            for fd in (*fds.values(), status_w):
                os.close(fd)
        expect_uid = uid if os.geteuid() == 0 else os.getuid()
        cap = self.limits.output_bytes
        return wait_group(proc, stdin, timeout, cap, init_status_fd=status_r, expect_uid=expect_uid, guard=guard,
                          on_stdout=on_stdout)  # fmt: skip

    def _run_unsandboxed(self, argv, contents, stdin, timeout, env, guard, on_stdout):
        workdir = tempfile.mkdtemp(prefix="fpa-unsandboxed-")
        try:
            for name, data in contents.items():
                path = Path(workdir, name)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
            env = {**env, "HOME": workdir, "TMPDIR": workdir}
            cmd = [*guard.prefix, *bwrap.rlimit_args(self.limits), *argv]
            proc = _popen(cmd, stdin, pass_fds=(), cwd=workdir, env=env)
            guard.attach(proc.pid)
            return wait_group(proc, stdin, timeout, self.limits.output_bytes, guard=guard, on_stdout=on_stdout)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)


def check_sandbox(python: str = sys.executable) -> None:
    """Raise ``SandboxUnavailable`` unless programs can run sandboxed with ``python``."""
    problem = sandbox_problem(python)
    if problem:
        raise SandboxUnavailable(problem)


@functools.lru_cache(maxsize=None)
def sandbox_problem(python: str = sys.executable) -> str | None:
    """What stops the sandbox from working (None when it works); cached per process. The probe
    runs a real ``Sandbox``, so the check lives beside it (not in ``check``, which it imports)."""
    return missing_prerequisite(python) or _probe(python)


def _probe(python: str) -> str | None:
    """Run a tiny program in the real sandbox; explain a failure."""
    code = "import os, sys; print(os.getuid(), sys.version_info[0])"
    try:
        result = Sandbox(python=python, checked=True).run_python(code, timeout_s=30)
    except (OSError, RuntimeError) as err:
        return f"sandbox set-up failed: {err}"
    if result.returncode == 0 and not result.timed_out:
        return None
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    detail = next((line for line in lines if line.startswith("bwrap:")), lines[-1] if lines else "")
    return f"sandbox probe failed (exit {result.returncode}): {detail.strip()}; {userns_hint(detail)}"


def _popen(cmd, stdin, *, pass_fds, cwd, env) -> subprocess.Popen:
    return subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=pass_fds, cwd=cwd, env=env,
        start_new_session=True,
    )  # fmt: skip


def _signal_of(returncode: int, mode: str) -> int | None:
    if returncode < 0:
        return -returncode
    if mode == "bwrap" and 128 < returncode <= 128 + 64:  # bwrap reports a signal as 128+N
        return returncode - 128
    return None


def _next_uid() -> int:
    with _counter_lock:
        count = next(_counter)
    return bwrap.UID_BASE + (os.getpid() * 4096 + count % 4096) % bwrap.UID_SPAN


def _memfd(name: str, data: bytes) -> int:
    fd = os.memfd_create(f"fpa-sandbox:{name}")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _processes_of(uid: int) -> int:
    """Processes and threads the non-root user already has (RLIMIT_NPROC counts them)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count


def _check_name(name: str) -> str:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or "\0" in name or name != str(path):
        raise ValueError(f"files: expected a relative path inside the work dir, got {name!r}")
    return name


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode() if isinstance(data, str) else bytes(data)
