"""Make Python trees the unprivileged sandbox user cannot reach (pyenv under /root,
mode 0700) visible to bwrap, without touching the host's permissions or mounts.

Once per ``Sandbox``, a helper in a private mount namespace (``unshare --mount
--propagation private``) bind-mounts each such tree onto an empty, world-traversable
directory and then waits on its stdin. Each run starts with ``nsenter
--mount=/proc/HELPER/ns/mnt``, so bwrap (already unprivileged) finds the tree at the
staging directory and binds it, read-only, back at its original path. The host never
sees these mounts. (A path, not an inherited fd: an fd would leak into the sandbox.)
The helper is never reaped while in use, so its pid cannot be reused; it exits when
the ``Sandbox`` is collected or its owner dies (EOF on stdin).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import weakref
from typing import Iterable

from fpa.sandbox import janitor
from fpa.sandbox.bwrap import tool

SCRIPT = 'while [ $# -gt 0 ]; do mount --bind "$1" "$2" || exit 125; shift 2; done; echo ready; read _'


class Staging:
    """Private mount namespace holding the staged trees; ``mountpoints[source]`` is where each is."""

    def __init__(self, sources: Iterable[str]) -> None:
        janitor.remove_dead_stages()
        self.dir = tempfile.mkdtemp(prefix=janitor.stage_prefix())
        os.chmod(self.dir, 0o711)
        self.mountpoints = {source: f"{self.dir}/{i}" for i, source in enumerate(sorted(sources))}
        pairs = []
        for source, mountpoint in self.mountpoints.items():
            os.mkdir(mountpoint)
            pairs += [source, mountpoint]
        unshare = [tool("unshare"), "--mount", "--propagation", "private", "--"]
        helper = subprocess.Popen(
            [*unshare, tool("sh"), "-c", SCRIPT, "fpa-stage", *pairs],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        if helper.stdout.readline().strip() != "ready":
            error = helper.stderr.read().strip()
            _stop(helper, self.dir)
            raise RuntimeError(f"staging {sorted(self.mountpoints)} failed: {error}")
        self.helper_pid = helper.pid
        weakref.finalize(self, _cleanup, helper, self.dir, os.getpid())

    def args(self) -> list[str]:
        """Command prefix that enters the private mount namespace."""
        return [tool("nsenter"), f"--mount=/proc/{self.helper_pid}/ns/mnt", "--"]


def _stop(helper: subprocess.Popen, directory: str) -> None:
    helper.stdin.close()
    helper.wait()
    helper.stdout.close()
    helper.stderr.close()
    shutil.rmtree(directory, ignore_errors=True)


def _cleanup(helper: subprocess.Popen, directory: str, owner: int) -> None:
    if os.getpid() == owner:  # a forked pool worker must not stop its parent's helper
        _stop(helper, directory)
