"""Start-up check: can the sandbox be built here? One line saying what is missing and how to
fix it. ``aggregate_report`` says which mechanism bounds a run's total memory here, and why not the others."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from fpa.sandbox import bound
from fpa.sandbox.bwrap import needs_staging, python_roots

TOOLS = {
    "bwrap": "bubblewrap is not installed: run `apt-get install -y bubblewrap`",
    "prlimit": "prlimit (util-linux) is not installed: run `apt-get install -y util-linux`",
    "setpriv": "setpriv (util-linux) is not installed: run `apt-get install -y util-linux`",
}
STAGING_TOOLS = {
    "unshare": "unshare (util-linux) is not installed: run `apt-get install -y util-linux`",
    "nsenter": "nsenter (util-linux) is not installed: run `apt-get install -y util-linux`",
    "mount": "mount is not installed: run `apt-get install -y mount`",
    "sh": "sh is not installed: run `apt-get install -y dash`",
}


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot be set up here; ``str()`` is one line with the fix."""


def missing_prerequisite(python: str = sys.executable) -> str | None:
    """What the sandbox lacks here before it can be tried (platform, interpreter, tools), or None."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux (bubblewrap, namespaces); this is {sys.platform}"
    if not Path(python).is_file():
        return f"python interpreter {python!r} not found"
    try:
        roots = python_roots(python)
    except (OSError, subprocess.CalledProcessError) as err:
        return f"python interpreter {python!r} does not run: {err}"
    tools = dict(TOOLS)
    if os.geteuid() == 0 and any(needs_staging(root) for root in roots):
        tools.update(STAGING_TOOLS)
    elif os.geteuid() != 0:
        tools.pop("setpriv")
    for tool, fix in tools.items():
        if shutil.which(tool) is None:
            return fix
    return None


def aggregate_report() -> list[str]:
    """The mechanism a default ``Sandbox`` uses here, then one line per mechanism: what it
    does here, or why it cannot (``*`` marks the chosen one)."""
    chosen = bound.memory_bound()
    lines = [f"aggregate bound (total memory and processes of one run): {chosen}"]
    for name in bound.BOUNDS:
        found = bound.probe(name)
        text = f"{name}: unavailable: {found}" if isinstance(found, str) else found.describe()
        lines.append(f"  {'*' if name == chosen else '-'} {text}")
    return lines


def _read_sysctl(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def userns_hint(detail: str) -> str:
    """Why an unprivileged user may not create user namespaces here, and the fix."""
    if _read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        return "unprivileged user namespaces are off: run `sysctl -w kernel.unprivileged_userns_clone=1`"
    if _read_sysctl("/proc/sys/user/max_user_namespaces") == "0":
        return "user namespaces are disabled: run `sysctl -w user.max_user_namespaces=15000`"
    if _read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (
            "AppArmor restricts unprivileged user namespaces: run "
            "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or add an AppArmor profile for bwrap"
        )
    if "namespace" in detail or "uid map" in detail or "Operation not permitted" in detail:
        return (
            "unprivileged user namespaces are blocked; inside Docker run with "
            "`--security-opt seccomp=unconfined --security-opt apparmor=unconfined`, or use a VM"
        )
    return "run the probe by hand with `python -m fpa.sandbox` to see the full error"
