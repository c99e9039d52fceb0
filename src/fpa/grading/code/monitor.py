"""Inside the sandbox: a monitor process that alone writes the run's output, and a child per program.

``MONITOR`` is prepended to the harnesses that run model code next to trusted harness code
(MBPP+/HumanEval+ candidates, BigCodeBench's tests). The harness's first process, the
monitor, never runs model code. It makes itself non-dumpable (``PR_SET_DUMPABLE`` 0), so no
other process of the run can ptrace it or open its ``/proc/PID/{fd,mem,environ}``, and
runs each program in a forked child (``run_child``) whose stdout is the sandbox's stderr
and whose stdin is ``/dev/null``. The child sends lines over a pipe; the monitor reads them
with a deadline and a byte cap, kills the child's process group when it is done, and
alone writes the run's stdout: its own ``{"start": header}`` line for the child (from its own
``json``, which no program can patch), each line of the child as it comes after a ">" (a
line that starts so is never one of the monitor's own), then its own ``{"end": how it
ended}``. So a program can send only its own lines, never a header or another program's
lines, and no nonce is needed. The host reads the output as it comes (``RecordStream``)
and may answer on the run's stdin, which only the host writes (every child's stdin is
``/dev/null``): a line with a child's header stops that child, if it is still the one
running (a stop for a child already ended is ignored); the monitor then goes on with the
next. The job itself comes first on stdin, after its length (``job_input``, ``read_job``).
With ``sweep`` (a run with its own pid namespace, i.e. under bwrap) the monitor also kills
every other process of the sandbox after each child, so that a program that left a daemon
behind cannot reach the next one. ``RecordStream``, ``read_records``, ``job_input`` and
``stop_command`` are the host side.
"""

from __future__ import annotations

import json
from typing import Callable

MONITOR = r'''
import ctypes as _ctypes, json as _json, os as _os, select as _select, signal as _signal, sys as _sys, time as _time

def isolate_monitor():
    """No other process of the run can ptrace this one or open its /proc files."""
    _set_dumpable(0)

def _set_dumpable(flag):
    libc = _ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, flag, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(_ctypes.get_errno(), f"prctl(PR_SET_DUMPABLE, {flag}) failed")

def read_job():
    """The job on stdin: an 8-byte length, then that many bytes. Read to its length, not to the end,
    so that stdin stays the host's channel for stop commands (``run_child``)."""
    return _read_exactly(int.from_bytes(_read_exactly(8), "big"))

def _read_exactly(size):
    data = bytearray()
    while len(data) < size:
        chunk = _os.read(0, size - len(data))
        if not chunk:
            raise EOFError(f"stdin ended after {len(data)} of {size} bytes")
        data += chunk
    return bytes(data)

def run_child(target, deadline_s, cap, sweep, header):
    """``target(send)`` in a forked child; ``send(line)`` writes one line (a str without newlines)
    to the monitor. The run's stdout gets ``{"start": header}``, then each line of the child as it
    comes, after ">", then ``{"end": end}``. Returns ``(end, the child's last line or None)``;
    ``end`` is "exited", "timeout", "too_large" (over ``cap`` bytes) or "stopped" (the host wrote
    ``header``'s JSON on stdin)."""
    _emit(_json.dumps({"start": header}).encode() + b"\n")
    _sys.stdout.flush()
    _sys.stderr.flush()
    read_fd, write_fd = _os.pipe()
    pid = _os.fork()
    if pid == 0:
        _os.close(read_fd)
        _child(target, write_fd)
    _os.close(write_fd)
    try:
        end, last = _read_child(pid, read_fd, _time.monotonic() + deadline_s, cap, header)
    finally:
        _os.close(read_fd)
        _stop(pid, sweep)
    _emit(_json.dumps({"end": end}).encode() + b"\n")
    return end, last

_commands = {"open": True, "buffer": bytearray()}  # stdin after the job: the host's stop commands

def _stop_asked(header):
    """Read the host's commands; whether one names ``header`` (the others name children already ended)."""
    chunk = _os.read(0, 1 << 16)
    if not chunk:
        _commands["open"] = False
    buffer = _commands["buffer"]
    buffer += chunk
    while b"\n" in buffer:
        line, _, rest = bytes(buffer).partition(b"\n")
        buffer[:] = rest
        try:
            if _json.loads(line) == header:
                return True
        except ValueError:
            pass
    return False

def _emit(data):
    view = memoryview(data)
    while view:
        view = view[_os.write(1, view):]

def _child(target, write_fd):
    _set_dumpable(1)  # as any process (psutil on its own children); the monitor stays closed
    _os.setpgid(0, 0)
    _os.dup2(2, 1)
    null = _os.open(_os.devnull, _os.O_RDONLY)
    _os.dup2(null, 0)
    write = _os.write  # bound before any program runs here
    def send(line):
        data = memoryview((line + "\n").encode("utf-8", "surrogatepass"))
        while data:
            data = data[write(write_fd, data):]
    status = 0
    try:
        target(send)
    except BaseException:
        status = 1
    _os._exit(status)

def _read_child(pid, read_fd, deadline, cap, header):
    pidfd = _os.pidfd_open(pid)
    partial, size, last = bytearray(), 0, None
    watched = [read_fd, pidfd] + ([0] if _commands["open"] else [])
    try:
        while True:
            remaining = deadline - _time.monotonic()
            if remaining <= 0:
                return "timeout", last
            ready = _select.select(watched, [], [], remaining)[0]
            if 0 in ready:
                if _stop_asked(header):
                    return "stopped", last
                if not _commands["open"]:
                    watched.remove(0)
            chunk = b""
            if read_fd in ready:
                chunk = _os.read(read_fd, 1 << 16)
                if not chunk:
                    watched.remove(read_fd)
            if pidfd in ready:  # exited: take what is already in the pipe, not what its leftovers write later
                chunk += _drain(read_fd)
            size += len(chunk) + chunk.count(b"\n")  # as forwarded, with the ">" of each line
            if size > cap:
                return "too_large", last
            last = _forward(partial, chunk, last)
            if pidfd in ready:
                return "exited", last
    finally:
        _os.close(pidfd)

def _drain(read_fd):
    _os.set_blocking(read_fd, False)
    data = bytearray()
    try:
        while chunk := _os.read(read_fd, 1 << 16):
            data += chunk
    except BlockingIOError:
        pass
    return bytes(data)

def _forward(partial, chunk, last):
    """Write the lines ``chunk`` completes, each after ">" (so none reads as the monitor's own line);
    keep the rest in ``partial``. Returns the last complete line (a line cut off at the end is dropped)."""
    end = chunk.rfind(b"\n")
    if end < 0:
        partial += chunk
        return last
    lines = (bytes(partial) + chunk[:end]).split(b"\n")
    partial[:] = chunk[end + 1:]
    _emit(b">" + b"\n>".join(lines) + b"\n")
    return lines[-1].decode("utf-8", "replace")

def _stop(pid, sweep):
    for kill in (lambda: _os.killpg(pid, _signal.SIGKILL), lambda: _os.kill(pid, _signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass
    if sweep:  # a pid namespace of our own: every process but bwrap's init and this one
        for name in _os.listdir("/proc"):
            if name.isdigit() and int(name) not in (1, _os.getpid()):
                try:
                    _os.kill(int(name), _signal.SIGKILL)
                except OSError:
                    pass
    _os.waitpid(pid, 0)
    while True:
        try:
            if _os.waitpid(-1, _os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
'''


def job_input(job: bytes) -> bytes:
    """``job`` as ``read_job`` reads it from stdin: its length first."""
    return len(job).to_bytes(8, "big") + job


def stop_command(header: dict) -> bytes:
    """What the host writes on the run's stdin to stop the child whose record starts with ``header``."""
    return (json.dumps(header) + "\n").encode()


class RecordStream:
    """The monitor's output, read as it comes (``feed`` each chunk). ``records`` holds the ended
    children as ``(header with its "end", the child's lines)``. ``on_line(header, line)`` is called
    for each line of the child running; what it returns (``stop_command``) is ``feed``'s answer.
    At a line the monitor cannot have written, reading stops: the records after it are left out."""

    def __init__(self, on_line: Callable[[dict, str], bytes | None] | None = None) -> None:
        self.records: list[tuple[dict, list[str]]] = []
        self._on_line, self._open, self._partial, self._broken = on_line, None, bytearray(), False

    def feed(self, chunk: bytes) -> bytes:
        end = chunk.rfind(b"\n")
        if self._broken:
            return b""
        if end < 0:
            self._partial += chunk
            return b""
        lines = (bytes(self._partial) + chunk[:end]).split(b"\n")
        self._partial[:] = chunk[end + 1:]
        answers = []
        for raw in lines:
            line = raw.decode("utf-8", "replace")
            if line.startswith(">") and self._open is not None:
                header, lines_sent = self._open
                lines_sent.append(line[1:])
                answers.append((self._on_line(header, line[1:]) or b"") if self._on_line else b"")
            elif not self._take_frame(line):
                self._broken = True
                break
        return b"".join(answers)

    def _take_frame(self, line: str) -> bool:
        """One of the monitor's own lines; False for a line it cannot have written."""
        try:
            frame = json.loads(line)
        except ValueError:
            return False
        if isinstance(frame, dict) and isinstance(frame.get("start"), dict):
            self._open = (frame["start"], [])
        elif isinstance(frame, dict) and self._open is not None and isinstance(frame.get("end"), str):
            header, lines = self._open
            self.records.append(({**header, "end": frame["end"]}, lines))
            self._open = None
        else:
            return False
        return True


def read_records(stdout: str) -> list[tuple[dict, list[str]]]:
    """The monitor's whole output as ``[(header with its "end", the child's lines)]``; a record cut
    off at the end is left out."""
    stream = RecordStream()
    stream.feed(stdout.encode("utf-8", "surrogatepass"))
    return stream.records
