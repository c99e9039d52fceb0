"""The command line that runs one program inside the sandbox (pure: no processes here).

Run as root, the chain is (each stage ``exec``s the next, so it is one pid)::

    prlimit  --nproc --as --cpu --fsize --nofile --core=0     rlimits, inherited by all
    [nsenter --mount=/proc/HELPER/ns/mnt]                      only when a Python tree is
                                                               unreachable for the sandbox
                                                               uid (see fpa.sandbox.stage)
    setpriv  --reuid U --regid U --clear-groups --inh-caps=-all --bounding-set=-all
             --no-new-privs --pdeathsig KILL                   drop root before bwrap
    bwrap    --unshare-all --unshare-user --disable-userns --die-with-parent --new-session
             --clearenv --setenv ...                           namespaces, env -i
             /usr ro, /lib /lib64 /bin /sbin symlinks, Python trees ro, /proc fresh,
             /dev: null zero urandom, shm -> /tmp; tmpfs /tmp and /sandbox (sized);
             / read-only; files copied in from memfds (--file); /etc/passwd, /etc/group, /etc/hosts
    PROGRAM  (cwd /sandbox, HOME=/sandbox)

U is unique to the run, so RLIMIT_NPROC (counted per uid) covers this run alone.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

from fpa.sandbox.limits import Limits

WORKDIR = "/sandbox"
# Per-run uids, UID_BASE + (pid * 4096 + counter) % UID_SPAN: no host user owns them, and the
# kernel releases a finished run's RLIMIT_NPROC count only ~1 s later, so a uid is not reused soon.
UID_BASE = 1_900_000_000
UID_SPAN = 1 << 31
SYSTEM_DIRS = ("/usr",)
ROOT_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")  # each bind costs ~1 ms per run
DEV_LINKS = {  # /dev/shm shares /tmp's sized tmpfs (glibc's shm_open and sem_open follow it)
    "shm": "/tmp", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
    "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
}  # fmt: skip


@functools.lru_cache(maxsize=None)
def tool(name: str) -> str:
    """Absolute path of a host tool, looked up once on this process's PATH (as the check does)."""
    return shutil.which(name) or name


def python_roots(python: str) -> tuple[str, ...]:
    """Directories that ``python`` needs: its prefixes (venv and base), outermost only."""
    if os.path.abspath(python) == os.path.abspath(sys.executable):  # not realpath: venvs share a binary
        paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    else:
        code = "import sys; print(sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, sep='\\n')"
        out = subprocess.run([python, "-I", "-c", code], capture_output=True, text=True, check=True).stdout
        paths = set(out.split())
    paths.add(str(Path(python).parent))
    paths.add(str(Path(os.path.realpath(python)).parent))
    return _outermost(p for p in paths if not _under_any(p, SYSTEM_DIRS))


def _under_any(path: str, roots: Sequence[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _outermost(paths) -> tuple[str, ...]:
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not _under_any(path, kept):
            kept.append(path)
    return tuple(sorted(kept))


def needs_staging(path: str) -> bool:
    """True when a non-root uid cannot walk down to ``path`` (an ancestor lacks o+x)."""
    for parent in list(Path(path).parents)[::-1]:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return True
    return False


def rlimit_args(limits: Limits, *, extra_nproc: int = 0) -> list[str]:
    return [
        tool("prlimit"),
        f"--nproc={limits.nproc + extra_nproc}",
        f"--as={limits.memory_bytes}",
        f"--cpu={limits.cpu_s}",
        f"--fsize={limits.fsize_bytes}",
        f"--nofile={limits.nofile}",
        "--core=0",
        "--",
    ]


def setpriv_args(uid: int) -> list[str]:
    return [tool("setpriv"), f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--pdeathsig=KILL", "--"]  # fmt: skip


def sandbox_env(python: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": f"{Path(python).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": WORKDIR,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "MPLBACKEND": "Agg",
        # One BLAS/OpenMP thread: runs are already spread across cores by the grader's pool, and
        # OpenBLAS would start a thread per core at ``import numpy`` (~0.1 s per run here, and past
        # 64 cores over RLIMIT_NPROC, which counts threads). A caller's ``extra`` can raise it.
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    env.update(extra or {})
    return env


def bwrap_args(
    *,
    roots: Mapping[str, str],
    file_fds: Mapping[str, int],
    env: Mapping[str, str],
    limits: Limits,
    status_fd: int | None = None,
) -> list[str]:
    """bwrap options; ``roots`` maps each in-sandbox Python tree to its (staged) source,
    ``file_fds`` maps an in-sandbox path to a readable fd holding its content, and
    ``status_fd`` receives bwrap's JSON status (its init's pid, then the exit code)."""
    size = str(limits.tmpfs_bytes)
    args = [tool("bwrap"), "--unshare-all", "--unshare-user", "--disable-userns",
            "--die-with-parent", "--new-session", "--clearenv"]  # fmt: skip
    if status_fd is not None:
        args += ["--json-status-fd", str(status_fd)]
    for key, value in env.items():
        args += ["--setenv", key, value]
    for path in SYSTEM_DIRS:
        args += ["--ro-bind", path, path]
    for link in ROOT_LINKS:
        if os.path.islink(link):
            args += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            args += ["--ro-bind", link, link]
    args += ["--proc", "/proc"]
    for device in DEVICES:  # /dev itself is a plain directory of the (read-only) root
        args += ["--dev-bind", device, device]
    for name, target in DEV_LINKS.items():
        args += ["--symlink", target, f"/dev/{name}"]
    args += ["--size", size, "--tmpfs", "/tmp"]
    for dest, source in sorted(roots.items()):
        args += ["--ro-bind", source, dest]
    args += ["--size", size, "--tmpfs", WORKDIR]
    for dest, fd in file_fds.items():
        args += ["--file", str(fd), dest]
    args += ["--remount-ro", "/", "--chdir", WORKDIR, "--"]
    return args


def etc_files(uid: int) -> dict[str, bytes]:
    """/etc/passwd and /etc/group naming the run's uid (getpass, pwd, ~ expansion), and an
    /etc/hosts naming the loopback (tests that serve on ``localhost`` inside the sandbox)."""
    passwd = f"root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:{uid}:{uid}:sandbox:{WORKDIR}:/usr/sbin/nologin\n"
    group = f"root:x:0:\nsandbox:x:{uid}:\n"
    hosts = "127.0.0.1 localhost\n::1 localhost\n"
    return {"/etc/passwd": passwd.encode(), "/etc/group": group.encode(), "/etc/hosts": hosts.encode()}
