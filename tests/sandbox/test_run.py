"""Positive behaviour: programs run, results come back, inputs arrive, limits validate."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fpa.sandbox import InputTooLarge, Limits, RunResult, Sandbox, bwrap, run_python
from fpa.sandbox.runner import _signal_of


def test_stdout_and_exit_code(sandbox):
    result = sandbox.run_python("import sys\nprint('hello', 6 * 7)\nsys.exit(3)")
    assert isinstance(result, RunResult)
    assert (result.stdout, result.returncode) == ("hello 42\n", 3)
    assert not result.timed_out and result.killed_by_signal is None
    assert not result.ok and 0 < result.wall_s < 5


def test_success_is_ok(sandbox):
    assert sandbox.run_python("assert sum(range(10)) == 45").ok


def test_exception_goes_to_stderr(sandbox):
    result = sandbox.run_python("raise ValueError('boom')")
    assert result.returncode == 1
    assert "ValueError: boom" in result.stderr


def test_stdin_and_args(sandbox):
    result = sandbox.run_python("import sys\nprint(input()[::-1], sys.argv[1:])", stdin="abc\n", args=["x", "y"])
    assert result.stdout == "cba ['x', 'y']\n"


def test_files_are_readable_and_importable(sandbox):
    files = {"solution.py": "def add(a, b):\n    return a + b\n", "data/input.txt": b"\x00\x01payload"}
    source = "from solution import add\nprint(add(2, 3), open('data/input.txt', 'rb').read()[2:])"
    result = sandbox.run_python(source, files=files)
    assert result.stdout == "5 b'payload'\n", result.stderr


def test_workdir_is_writable_and_private(sandbox):
    source = "import os\nopen('out.txt', 'w').write('x')\nprint(os.getcwd(), os.environ['HOME'], sorted(os.listdir()))"
    assert sandbox.run_python(source).stdout == "/sandbox /sandbox ['main.py', 'out.txt']\n"
    assert sandbox.run_python("import os; print(sorted(os.listdir('.')))").stdout == "['main.py']\n"


def test_runs_unprivileged_with_minimal_env(sandbox):
    source = "import os, getpass\nprint(os.getuid() != 0, os.getgid() != 0, getpass.getuser(), sorted(os.environ))"
    result = sandbox.run_python(source)
    assert result.stdout.startswith("True True sandbox ")
    names = eval(result.stdout.split(" ", 3)[3])
    assert set(names) <= set(bwrap.sandbox_env(sys.executable)) | {"PWD"}


def test_argv_program(sandbox):
    result = sandbox.run(["/bin/sh", "-c", "echo $HOME; cat in.txt"], files={"in.txt": "abc"})
    assert (result.returncode, result.stdout) == (0, "/sandbox\nabc")


def test_third_party_import(sandbox):
    pytest.importorskip("numpy")
    result = sandbox.run_python("import numpy\nprint(numpy.arange(4).sum())")
    assert result.stdout == "6\n", result.stderr


def test_output_is_truncated(sandbox):
    result = sandbox.run_python("import sys\nsys.stdout.write('x' * 1_000_000)\nsys.stderr.write('e' * 10)")
    assert result.returncode == 0
    assert result.stdout_truncated and len(result.stdout) == sandbox.limits.output_bytes
    assert not result.stderr_truncated and result.stderr == "e" * 10


def test_large_stdin_does_not_deadlock(sandbox):
    data = "1\n" * 500_000
    result = sandbox.run_python("import sys\nprint(sum(map(int, sys.stdin)))", stdin=data)
    assert result.stdout == "500000\n"


COUNTER = """
import sys
for count in range(1, 1000):  # a line out, then waits for the host's answer on stdin
    print(count, flush=True)
    if sys.stdin.readline() != "more\\n":
        break
"""


def test_on_stdout_answers_on_stdin_while_the_run_goes_on(sandbox):
    seen = []

    def answer(chunk: bytes) -> bytes:
        seen.append(chunk)
        return b"more\n" if len(seen) < 3 else b"enough\n"

    result = sandbox.run_python(COUNTER, on_stdout=answer)
    assert (result.stdout, b"".join(seen), result.returncode) == ("1\n2\n3\n", b"1\n2\n3\n", 0)
    assert sandbox.run_python(COUNTER, stdin="more\n").stdout == "1\n2\n"  # without it, stdin ends as before


def test_killed_by_signal_is_reported(sandbox):
    result = sandbox.run_python("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert (result.returncode, result.killed_by_signal) == (-11, 11)


def test_module_helper_run_python(sandbox):
    result = run_python("print(input() * 2)", "ab\n", 5, sandbox=sandbox)
    assert result.stdout == "abab\n"


def test_unsandboxed_mode_warns_and_runs():
    with pytest.warns(RuntimeWarning, match="UNSANDBOXED"):
        sandbox = Sandbox(Limits(timeout_s=5), mode="none")
    source = "import os\nprint(open('f.txt').read(), os.getcwd() != '/sandbox')"
    result = sandbox.run_python(source, files={"f.txt": "hi"})
    assert result.stdout == "hi True\n"
    assert sandbox.run_python("while True: pass", timeout_s=0.5).timed_out


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"timeout_s": 0}, "Limits.timeout_s: expected a finite number > 0, got 0"),
        ({"timeout_s": float("nan")}, "Limits.timeout_s: expected a finite number > 0, got nan"),
        ({"timeout_s": float("inf")}, "Limits.timeout_s: expected a finite number > 0, got inf"),
        ({"nproc": 1.5}, "Limits.nproc: expected an integer, got 1.5"),
        ({"memory_bytes": -1}, "Limits.memory_bytes: expected a finite number > 0, got -1"),
    ],
)
def test_limits_are_validated(kwargs, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        Limits(**kwargs)


def test_bad_arguments_are_rejected(sandbox):
    with pytest.raises(ValueError, match="Sandbox.mode: expected one of"):
        Sandbox(mode="docker")
    with pytest.raises(ValueError, match="files: expected a relative path"):
        sandbox.run_python("", files={"../escape.py": ""})
    with pytest.raises(ValueError, match="'main.py' is reserved"):
        sandbox.run_python("", files={"main.py": ""})
    with pytest.raises(ValueError, match="argv: expected a non-empty list"):
        sandbox.run("echo hi")


def test_signal_decoding():
    assert _signal_of(-9, "none") == 9
    assert _signal_of(137, "bwrap") == 9
    assert _signal_of(137, "none") is None
    assert _signal_of(1, "bwrap") is None


def test_command_line_has_every_layer(sandbox):
    cmd = sandbox.command([sys.executable, "main.py"], uid=bwrap.UID_BASE + 1, file_fds={"/sandbox/main.py": 9}, env={})
    text = " ".join(cmd)
    names = [os.path.basename(arg) for arg in cmd]
    assert names[0] == "prlimit" and "--core=0" in cmd and f"--nproc={sandbox.limits.nproc}" in cmd
    if os.geteuid() == 0:
        assert f"--reuid={bwrap.UID_BASE + 1}" in cmd and "--no-new-privs" in cmd and "--bounding-set=-all" in cmd
        assert names.index("setpriv") < names.index("bwrap")
    for flag in ("--unshare-all", "--die-with-parent", "--new-session", "--clearenv", "--disable-userns"):
        assert flag in cmd
    assert "--ro-bind /usr /usr" in text and "--remount-ro /" in text and "--file 9 /sandbox/main.py" in text
    for forbidden in ("/home", "/run", "/etc/shadow", "--bind /root ", "--ro-bind /root "):
        assert forbidden not in text


def test_inputs_that_cannot_fit_are_rejected(sandbox):
    with pytest.raises(InputTooLarge, match="over Limits.fsize_bytes"):
        sandbox.run_python("", files={"big.bin": b"x" * (sandbox.limits.fsize_bytes + 1)})


def test_another_interpreter_in_a_private_dir(sandbox, tmp_path):
    """A venv inside a 0700 dir (as CI's mktemp -d makes) is staged and used as-is."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    os.chmod(tmp_path, 0o700)
    python = str(tmp_path / "venv" / "bin" / "python")
    result = Sandbox(sandbox.limits, python=python).run_python("import sys\nprint(sys.prefix)")
    assert (result.returncode, result.stdout) == (0, f"{tmp_path / 'venv'}\n"), result.stderr


def test_localhost_resolves_to_the_sandboxs_own_loopback(sandbox):
    """Tests that serve on ``localhost`` inside the sandbox (BigCodeBench/1038, 1040) reach themselves."""
    source = (
        "import socket\n"
        "server = socket.create_server(('localhost', 0))\n"
        "client = socket.create_connection(('localhost', server.getsockname()[1]), timeout=5)\n"
        "conn, _ = server.accept()\n"
        "client.sendall(b'ping')\n"
        "print(socket.gethostbyname('localhost'), conn.recv(4))\n"
    )
    result = sandbox.run_python(source)
    assert result.stdout == "127.0.0.1 b'ping'\n", result.stderr
