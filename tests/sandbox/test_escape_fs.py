"""Adversarial: the file system. Writes never reach the host; secrets are never read."""

from __future__ import annotations

import os
import sys
import textwrap
import tomllib
import uuid
from pathlib import Path

from fpa.sandbox import bwrap

REPO = Path(__file__).resolve().parents[2]

WRITE_EVERYWHERE = """
import sys
for path in sys.argv[1:]:
    try:
        with open(path, "w") as handle:
            handle.write("pwned")
        print("WROTE", path)
    except OSError as err:
        print("DENIED", path, err.strerror)
"""


def test_writes_outside_the_workdir_never_reach_the_host(sandbox, tmp_path):
    name = f"fpa-sandbox-escape-{uuid.uuid4().hex}"
    places = ["/tmp", "/etc", str(REPO), str(tmp_path), "", "/root", sys.prefix, "/usr", "/dev/shm", "/var/tmp"]
    targets = [f"{place}/{name}" for place in places]
    result = sandbox.run_python(WRITE_EVERYWHERE, args=targets)
    assert result.returncode == 0, result.stderr
    for target in targets:
        assert not os.path.exists(target), f"sandbox wrote {target} on the host"
    denied = {line.split()[1] for line in result.stdout.splitlines() if line.startswith("DENIED")}
    # the read-only places must fail even inside; /tmp and /dev/shm are private tmpfs
    assert {f"/etc/{name}", f"/{name}", f"/usr/{name}", f"{sys.prefix}/{name}"} <= denied


def test_python_installation_is_read_only(sandbox):
    source = f"open({os.path.realpath(sys.executable)!r}, 'ab').write(b'x')"
    before = os.stat(os.path.realpath(sys.executable))
    result = sandbox.run_python(source)
    assert result.returncode != 0
    assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr
    after = os.stat(os.path.realpath(sys.executable))
    assert (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns)


def test_secrets_are_not_readable(sandbox, monkeypatch):
    canary = f"fpa-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("FPA_SANDBOX_CANARY", canary)
    checkout_file = REPO / "pyproject.toml"
    # a line of the file's content: its path (printed with DENIED) may name the project too
    checkout_marker = tomllib.loads(checkout_file.read_text())["project"]["description"]
    source = f"""
import glob, os
print(dict(os.environ))
for path in ["/etc/shadow", "/etc/gshadow", "/proc/1/environ", "/proc/self/environ",
             "/proc/{os.getpid()}/environ", "/proc/{os.getppid()}/environ", "/root/.bash_history",
             {str(checkout_file)!r}] + glob.glob("/proc/*/environ"):
    try:
        print(path, open(path, "rb").read())
    except OSError as err:
        print(path, "DENIED", err.strerror)
"""
    result = sandbox.run_python(source)
    assert result.returncode == 0, result.stderr
    assert canary not in result.stdout + result.stderr
    assert "root:" not in result.stdout  # /etc/shadow content
    assert "/etc/shadow DENIED" in result.stdout
    assert f"{checkout_file} DENIED" in result.stdout  # the checkout is not mounted
    assert checkout_marker not in result.stdout


def test_only_the_minimal_tree_is_visible(sandbox):
    """The minimal tree, plus the directories that lead to the Python trees (read-only): of a
    checkout that holds the venv (the README's `.venv`), only the venv is there."""
    python_tops = {Path(root).parts[1] for root in bwrap.python_roots(sys.executable)}
    source = ("import os, sys\nfor path in ('/', '/etc', '/dev'):\n    print(sorted(os.listdir(path)))\n"
              "print(os.path.exists(sys.argv[1]))")
    lines = sandbox.run_python(source, args=[str(REPO / "README.md")]).stdout.splitlines()
    top = set(eval(lines[0]))
    assert not top & ({"home", "run", "var", "opt", "srv", "mnt", "media", "boot", "sys", "work"} - python_tops)
    allowed = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "proc", "dev", "tmp", "sandbox", "etc", "root"}
    assert top <= allowed | python_tops
    assert eval(lines[1]) == ["group", "hosts", "passwd"]
    assert set(eval(lines[2])) <= {"null", "zero", "urandom", "shm", "fd", "stdin", "stdout", "stderr"}
    assert lines[3] == "False"  # the checkout's files


def test_host_processes_are_invisible(sandbox):
    source = "import os\nprint(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))"
    pids = eval(sandbox.run_python(source).stdout)
    assert len(pids) <= 3 and max(pids) <= 3  # bwrap's init, the program, nothing of the host


def test_no_way_back_to_root(sandbox):
    source = """
import os
for attempt in (lambda: os.setuid(0), lambda: os.setgid(0), lambda: os.chroot("/tmp"), lambda: os.unshare(0)):
    try:
        attempt(); print("ALLOWED")
    except (OSError, AttributeError) as err:
        print("DENIED", type(err).__name__)
print(open("/proc/self/status").read())
"""
    result = sandbox.run_python(source)
    assert "ALLOWED" not in result.stdout
    status = dict(line.split(":\t", 1) for line in result.stdout.splitlines() if ":\t" in line)
    assert status["CapEff"].strip() == "0000000000000000" and status["CapBnd"].strip() == "0000000000000000"
    assert status["NoNewPrivs"].strip() == "1"


def test_nested_user_namespaces_are_disabled(sandbox):
    result = sandbox.run(["/usr/bin/unshare", "--user", "--map-root-user", "true"])
    assert result.returncode != 0


def test_no_host_file_descriptors_leak_in(sandbox):
    source = textwrap.dedent(
        """
        import os
        fds = [f"/proc/self/fd/{n}" for n in range(3, 256)]
        print([os.readlink(path) for path in fds if os.path.lexists(path)])
        """
    )
    result = sandbox.run_python(source, files={"input.txt": "x"})
    assert result.stdout == "[]\n", result.stdout
