"""Inside the sandbox: a monitor process that alone writes the run's output, and a child per program.

``MONITOR`` is prepended to the harnesses that run model code next to trusted harness code
(MBPP+/HumanEval+ candidates, BigCodeBench's tests). The harness's first process, the
monitor, never runs model code. It makes itself non-dumpable (``PR_SET_DUMPABLE`` 0), so no
other process of the run can ptrace it or open its ``/proc/PID/{fd,mem,environ}``, and
runs each program in a forked child (``run_child``) whose stdout is the sandbox's stderr
and whose stdin is ``/dev/null``. The child sends lines over a pipe; the monitor reads them
with a deadline and a byte cap, kills the child's process group when it is done, and
writes the run's stdout: its own header line for the child (from its own ``json``, which
no program can patch), with the number of the child's lines that follow. So a program can
send only its own lines, never a header or another program's lines, and no nonce is needed.
With ``sweep`` (a run with its own pid namespace, i.e. under bwrap) the monitor also kills
every other process of the sandbox after each child, so that a program that left a daemon
behind cannot reach the next one. ``read_records`` is the host side.
"""

from __future__ import annotations

import json

MONITOR = r'''
import ctypes as _ctypes, json as _json, os as _os, select as _select, signal as _signal, sys as _sys, time as _time

def isolate_monitor():
    """No other process of the run can ptrace this one or open its /proc files."""
    _set_dumpable(0)

def _set_dumpable(flag):
    libc = _ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, flag, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise OSError(_ctypes.get_errno(), f"prctl(PR_SET_DUMPABLE, {flag}) failed")

def run_child(target, deadline_s, cap, sweep):
    """``target(send)`` in a forked child; returns ``(lines, end)``, ``end`` one of "exited",
    "timeout", "too_large". ``send(line)`` writes one line (a str without newlines) to the monitor."""
    _sys.stdout.flush()
    _sys.stderr.flush()
    read_fd, write_fd = _os.pipe()
    pid = _os.fork()
    if pid == 0:
        _os.close(read_fd)
        _child(target, write_fd)
    _os.close(write_fd)
    try:
        data, end = _read_child(pid, read_fd, _time.monotonic() + deadline_s, cap)
    finally:
        _os.close(read_fd)
        _stop(pid, sweep)
    lines = bytes(data).decode("utf-8", "replace").split("\n")[:-1]  # a last line without its newline was cut off
    return lines, end

def write_child(header, lines):
    """The monitor's output for one child: ``header`` with the count of the child's lines, then them."""
    _sys.stdout.write(_json.dumps({**header, "lines": len(lines)}) + "\n")
    _sys.stdout.writelines(line + "\n" for line in lines)
    _sys.stdout.flush()

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

def _read_child(pid, read_fd, deadline, cap):
    pidfd = _os.pidfd_open(pid)
    data, watched, end = bytearray(), [read_fd, pidfd], None
    try:
        while end is None:
            remaining = deadline - _time.monotonic()
            if remaining <= 0:
                return data, "timeout"
            ready = _select.select(watched, [], [], remaining)[0]
            if read_fd in ready:
                chunk = _os.read(read_fd, 1 << 16)
                data += chunk
                if not chunk:
                    watched.remove(read_fd)
            if pidfd in ready:  # exited: take what is already in the pipe, not what its leftovers write later
                _os.set_blocking(read_fd, False)
                try:
                    while chunk := _os.read(read_fd, 1 << 16):
                        data += chunk
                except BlockingIOError:
                    pass
                end = "exited"
            if len(data) > cap:
                return data[:0], "too_large"
        return data, end
    finally:
        _os.close(pidfd)

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


def read_records(stdout: str) -> list[tuple[dict, list[str]]]:
    """The monitor's output as ``[(header, the child's lines)]``; a record cut off at the end is left out."""
    lines = stdout.split("\n")[:-1]
    records, index = [], 0
    while index < len(lines):
        header = json.loads(lines[index])
        count = header.pop("lines")
        if index + 1 + count > len(lines):
            break
        records.append((header, lines[index + 1: index + 1 + count]))
        index += 1 + count
    return records
