"""Run one process group to completion: feed stdin, cap the output, enforce a wall clock.

The child must have been started with ``start_new_session=True``, so that its pid is
also its process-group id. A pidfd tells us when the leader exits; the group is then
SIGKILLed while the leader is still an unreaped zombie (so the id cannot have been
reused). On timeout the whole group is SIGKILLed.

Under bwrap the leader is bwrap's monitor, which exits as soon as the program has,
while bwrap's init (pid 1 of the sandbox) is still tearing the namespace down and
killing leftover background processes. ``init_status_fd`` is bwrap's
``--json-status-fd``; from its ``child-pid`` we take a pidfd on that init and also wait
for it, so that when we return no process of the run is left on the host.

A ``guard`` (``fpa.sandbox.bound``: the run's cgroup or the watchdog) is polled every
``guard.interval_s``; once it finds the run over its memory cap the run is killed as at
a timeout, and reported with ``memory_exceeded``.

``on_stdout`` (optional) makes the run a conversation: it is called with each chunk of stdout
as it is kept (within the cap), and what it returns is written to the run's stdin, which then
stays open until the run ends (without it, stdin is closed once ``stdin`` is written).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Callable

DRAIN_AFTER_KILL_S = 1.0  # after the kill, how long to wait for pipes and init to go
CHUNK = 1 << 16


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    timed_out: bool
    memory_exceeded: bool = False
    memory_peak_bytes: int | None = None


@dataclass
class _Run:
    proc: subprocess.Popen
    cap: int
    expect_uid: int | None
    sel: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)
    out: dict = field(default_factory=dict)  # pipe -> bytearray
    truncated: dict = field(default_factory=dict)  # pipe -> bool
    status: bytearray = field(default_factory=bytearray)
    pending: memoryview = memoryview(b"")
    init_pidfd: int | None = None
    guard: object | None = None  # a CgroupRun or WatchdogRun: over(), oom_killed(), kill(), peak_bytes()
    on_stdout: Callable[[bytes], bytes | None] | None = None  # a chunk of stdout -> bytes for stdin
    replying: bool = False  # whether replies may still be written (stdin open, the run not killed)


def wait_group(proc: subprocess.Popen, stdin: bytes | None, timeout_s: float, cap: int, *,
               init_status_fd: int | None = None, expect_uid: int | None = None, guard=None,
               on_stdout: Callable[[bytes], bytes | None] | None = None) -> Finished:  # fmt: skip
    """Pump ``proc``'s pipes until it (and bwrap's init) exit and the pipes close, until
    ``timeout_s``, or until ``guard`` finds the run over its memory cap; ``on_stdout`` answers
    its stdout on its stdin (then ``proc`` needs a stdin pipe)."""
    if on_stdout is not None and proc.stdin is None:
        raise ValueError("wait_group: on_stdout needs a process started with stdin=PIPE")
    deadline = time.monotonic() + timeout_s
    run = _Run(proc, cap, expect_uid, guard=guard, on_stdout=on_stdout, replying=on_stdout is not None)
    leader_fd = os.pidfd_open(proc.pid)
    try:
        run.sel.register(leader_fd, selectors.EVENT_READ, "leader")
        for pipe in (proc.stdout, proc.stderr):
            run.out[pipe], run.truncated[pipe] = bytearray(), False
            run.sel.register(pipe, selectors.EVENT_READ, "output")
        if init_status_fd is not None:
            run.sel.register(init_status_fd, selectors.EVENT_READ, "status")
        if proc.stdin is not None:
            run.pending = memoryview(stdin or b"")
            os.set_blocking(proc.stdin.fileno(), False)
            run.sel.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
        try:
            outcome = _pump(run, deadline, watch=True)
        except BaseException:  # on_stdout raised, or an interrupt: leave no process of the run running
            _kill(run)
            raise
        if outcome != "done":
            if guard is not None:
                guard.kill()
            _kill(run)
            _pump(run, time.monotonic() + DRAIN_AFTER_KILL_S, watch=False)
        # v1's OOM killer may have killed one process of a run that then exited by itself
        over = outcome == "memory" or (guard is not None and guard.oom_killed())
    finally:
        run.sel.close()
        for fd in (leader_fd, run.init_pidfd, init_status_fd):
            if fd is not None:
                os.close(fd)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    returncode = proc.wait()
    out, err = proc.stdout, proc.stderr
    peak = guard.peak_bytes() if guard is not None else None
    return Finished(returncode, bytes(run.out[out]), bytes(run.out[err]),
                    run.truncated[out], run.truncated[err], outcome == "timeout", over, peak)  # fmt: skip


def _pump(run: _Run, deadline: float, *, watch: bool) -> str:
    """Serve every event until nothing is left to wait for ("done"), the deadline ("timeout"),
    or, with ``watch``, until the guard finds the run over its memory cap ("memory")."""
    guard = run.guard if watch else None
    next_check = time.monotonic() + (guard.interval_s if guard else 0)  # a run cannot grow much sooner
    while len(run.sel.get_map()) > 0:
        now = time.monotonic()
        if guard is not None and now >= next_check:
            if guard.over():
                return "memory"
            next_check = now + guard.interval_s
        remaining = deadline - now
        if remaining <= 0:
            return "timeout"
        wait = remaining if guard is None else min(remaining, next_check - now)
        for key, _ in run.sel.select(wait):
            kind = key.data
            if kind == "leader":
                run.sel.unregister(key.fileobj)
                _kill_group(run.proc.pid)  # leftovers of the group; the leader is a zombie
            elif kind == "init":
                run.sel.unregister(key.fileobj)
            elif kind == "stdin":
                _feed(run, key.fileobj)
            elif kind == "status":
                _read_status(run, key.fileobj)
            else:
                _read_output(run, key.fileobj)
    return "done"


def _kill(run: _Run) -> None:
    """SIGKILL the group and bwrap's init (which takes the whole pid namespace with it)."""
    _kill_group(run.proc.pid)
    if run.init_pidfd is not None:
        try:
            signal.pidfd_send_signal(run.init_pidfd, signal.SIGKILL)
        except ProcessLookupError:
            pass
    run.replying = False
    for key in list(run.sel.get_map().values()):
        if key.data == "stdin":
            run.sel.unregister(key.fileobj)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _feed(run: _Run, pipe) -> None:
    try:
        written = os.write(pipe.fileno(), run.pending[:CHUNK]) if run.pending else 0
    except BrokenPipeError:  # the program stopped reading; its problem
        written, run.pending, run.replying = 0, memoryview(b""), False
    except BlockingIOError:
        return
    run.pending = run.pending[written:]
    if not run.pending:
        run.sel.unregister(pipe)
        if not run.replying:  # no more to come: the program sees its end of input
            pipe.close()


def _reply(run: _Run, data: bytes) -> None:
    """Queue ``data`` for the run's stdin (dropped once the run is killed or stopped reading)."""
    if not data or not run.replying:
        return
    if not run.pending:
        run.sel.register(run.proc.stdin, selectors.EVENT_WRITE, "stdin")
    run.pending = memoryview(bytes(run.pending) + data)


def _read_output(run: _Run, pipe) -> None:
    chunk = os.read(pipe.fileno(), CHUNK)
    if not chunk:
        run.sel.unregister(pipe)
        return
    data = run.out[pipe]
    room = run.cap - len(data)
    if len(chunk) > room:
        run.truncated[pipe] = True
    kept = chunk[: max(room, 0)]
    data += kept
    if kept and run.on_stdout is not None and pipe is run.proc.stdout:
        _reply(run, run.on_stdout(kept))


def _read_status(run: _Run, fd: int) -> None:
    """bwrap's status lines; the first names its init's host pid, which we then watch."""
    chunk = os.read(fd, CHUNK)
    if not chunk:
        run.sel.unregister(fd)
        return
    run.status += chunk
    while b"\n" in run.status:
        line, _, rest = bytes(run.status).partition(b"\n")
        run.status = bytearray(rest)
        pid = json.loads(line).get("child-pid") if line.strip() else None
        if pid and run.init_pidfd is None:
            run.init_pidfd = _open_init(pid, run.expect_uid)
            if run.init_pidfd is not None:
                run.sel.register(run.init_pidfd, selectors.EVENT_READ, "init")


def _open_init(pid: int, expect_uid: int | None) -> int | None:
    """A pidfd on bwrap's init, if it still exists and is ours (the uid is unique to the run)."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    try:
        uid_ok = expect_uid is None or os.stat(f"/proc/{pid}").st_uid == expect_uid
    except FileNotFoundError:
        uid_ok = False
    if not uid_ok:
        os.close(pidfd)
        return None
    return pidfd
