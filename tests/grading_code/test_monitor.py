"""The monitor inside the sandbox: a child cannot reach it or forge its records, and is bounded."""

from __future__ import annotations

from fpa.grading.code.monitor import MONITOR, RecordStream, read_records, stop_command
from fpa.sandbox import Sandbox

CHILDREN = r"""
import ctypes, sys, time

def attach(send):  # PTRACE_ATTACH to the monitor, and its memory: refused for a non-dumpable process
    libc = ctypes.CDLL(None, use_errno=True)
    send(str(libc.ptrace(16, _os.getppid(), None, None)))
    try:
        open(f"/proc/{_os.getppid()}/mem", "rb")
        send("mem opened")
    except OSError as error:
        send(type(error).__name__)

def forge(send):  # the monitor's lines and a stop of its own, in its lines, on its stdout, on its stdin
    send('{"end": "exited"}')
    send('{"start": {"name": "attach"}}\n{"end": "stopped"}')  # a newline inside: each part is still its line
    _os.write(1, b'{"start": {"name": "forge"}}\n{"end": "exited"}\n')
    for path in ("/dev/stdin", f"/proc/{_os.getppid()}/fd/0"):  # /dev/null; the monitor's: not dumpable
        try:
            with open(path, "w") as stdin:
                stdin.write('{"name": "forge"}\n')
            send(path + " written")
        except OSError as error:
            send(type(error).__name__)

def daemon(send):  # a process of its own session (out of the child's process group), left behind
    ready_r, ready_w = _os.pipe()
    if _os.fork() == 0:
        _os.setsid()
        _os.write(ready_w, b"x")
        time.sleep(60)
    _os.read(ready_r, 1)
    send("left")

def count(send):  # live processes of the sandbox besides bwrap's init, the monitor and this one (a kill takes a moment)
    for _ in range(100):
        others = [name for name in _os.listdir("/proc") if name.isdigit() and int(name) not in (1, _os.getppid(), _os.getpid())]
        live = [name for name in others if _state(name) not in ("Z", "X", None)]
        if not live:
            break
        time.sleep(0.02)
    send(str(len(live)))

def _state(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None

def slow(send):
    send("started")
    time.sleep(60)

def big(send):
    send("y" * 5000)

isolate_monitor()
for name in sys.argv[1:]:
    run_child(globals()[name], 3, 1000, True, {"name": name})
"""


def test_children_are_kept_apart_from_the_monitor():
    result = Sandbox().run_python(MONITOR + CHILDREN, args=["attach", "forge", "daemon", "count", "slow", "big"])
    records = {header["name"]: (lines, header["end"]) for header, lines in read_records(result.stdout)}
    assert records["attach"] == (["-1", "PermissionError"], "exited")  # PR_SET_DUMPABLE 0
    assert records["forge"] == (['{"end": "exited"}', '{"start": {"name": "attach"}}', '{"end": "stopped"}',
                                 "/dev/stdin written", "PermissionError"], "exited")  # lines, not headers; not stopped
    assert records["daemon"] == (["left"], "exited") and records["count"] == (["0"], "exited")  # the sweep
    assert records["slow"] == (["started"], "timeout") and records["big"] == ([], "too_large")
    assert list(records) == ["attach", "forge", "daemon", "count", "slow", "big"]


SLEEPERS = r"""
import time

def sleeper(send):
    send("started")
    time.sleep(60)

isolate_monitor()
for index in range(3):
    run_child(sleeper, 3, 1000, True, {"index": index})
"""


def test_the_host_stops_the_child_it_names_and_no_other():
    """A stop names a child by its header; one that names a child already ended is ignored."""
    names = {0: 0, 1: 0, 2: 2}  # child 1 is sent a stop for child 0, which has ended

    def answer(header: dict, line: str) -> bytes:
        return stop_command({"index": names[header["index"]]})

    stream = RecordStream(answer)
    result = Sandbox().run_python(MONITOR + SLEEPERS, stdin=b"", on_stdout=stream.feed)
    assert result.ok, result.stderr[-2000:]
    assert [(header, lines) for header, lines in stream.records] == [
        ({"index": 0, "end": "stopped"}, ["started"]),
        ({"index": 1, "end": "timeout"}, ["started"]),
        ({"index": 2, "end": "stopped"}, ["started"]),
    ]
    assert stream.records == read_records(result.stdout)  # as it came, and all at once


def test_records_read_as_they_come_equal_those_read_at_once():
    """Byte by byte or whole, the same records; at a line the monitor cannot have written (a
    child's line outside a record) reading stops, and the records after it are left out."""
    output = '{"start": {"n": 1}}\n>[1]\n>{"end": "exited"}\n{"end": "stopped"}\n{"start": {"n": 2}}\n>é\n{"end": "exited"}\n'
    seen = []
    stream = RecordStream(lambda header, line: seen.append((header["n"], line)) or b"")
    for byte in output.encode():
        stream.feed(bytes([byte]))
    assert stream.records == read_records(output) == [({"n": 1, "end": "stopped"}, ["[1]", '{"end": "exited"}']),
                                                      ({"n": 2, "end": "exited"}, ["é"])]  # fmt: skip
    assert seen == [(1, "[1]"), (1, '{"end": "exited"}'), (2, "é")]
    assert read_records('{"start": {"n": 1}}\n{"end": "exited"}\n>forged\n{"start": {"n": 2}}\n{"end": "exited"}\n') == [
        ({"n": 1, "end": "exited"}, [])]
