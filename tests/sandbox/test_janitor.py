"""Leftovers of dead launchers are cleaned up: stuck bwrap orphans and staging directories."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time

import pytest

from fpa.sandbox import janitor
from fpa.sandbox.bwrap import UID_BASE, UID_SPAN


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to impersonate a sandbox uid")
def test_orphaned_bwrap_is_killed():
    directory = tempfile.mkdtemp()
    os.chmod(directory, 0o755)
    fake = shutil.copy("/bin/sleep", os.path.join(directory, "bwrap"))  # comm "bwrap", like the stuck child
    uid = UID_BASE + UID_SPAN - 7
    try:
        subprocess.run(["sh", "-c", f"setpriv --reuid={uid} --regid={uid} --clear-groups {fake} 30 &"], check=True)
        deadline, pid = time.monotonic() + 5, None
        while pid is None and time.monotonic() < deadline:
            pid = next((int(p) for p in os.listdir("/proc") if p.isdigit() and _is_fake(p, uid)), None)
        assert pid is not None
        if janitor._stat_fields(pid)[3] != "1":
            pytest.skip("orphans are not reparented to pid 1 here (a subreaper is in the way)")
        time.sleep(0.05)  # /proc/uptime and start times tick at 10 ms: let the orphan age past one tick
        assert pid in janitor.kill_stuck_bwrap(min_age_s=0)
        time.sleep(0.1)
        assert janitor._stat_fields(pid) is None or janitor._stat_fields(pid)[2] in ("Z", "X")
    finally:
        shutil.rmtree(directory)


def _is_fake(pid: str, uid: int) -> bool:
    try:
        return os.stat(f"/proc/{pid}").st_uid == uid and (janitor._stat_fields(pid) or [0, ""])[1] == "bwrap"
    except OSError:
        return False


def test_dead_owners_staging_dirs_are_removed(tmp_path):
    mine = tmp_path / f"{janitor.stage_prefix()}abc"
    dead = tmp_path / f"{janitor.STAGE_PREFIX}999999999-123-abc"
    other = tmp_path / "fpa-sandbox-stage-old-style"
    for path in (mine, dead, other):
        (path / "0").mkdir(parents=True)
    removed = janitor.remove_dead_stages(str(tmp_path))
    if os.geteuid() == 0:
        assert removed == [str(dead)]
    assert mine.exists() and other.exists()
