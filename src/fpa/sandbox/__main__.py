"""``python -m fpa.sandbox``: check the sandbox here and show one run's command line."""

from __future__ import annotations

import shlex
import sys

from fpa.sandbox import Sandbox, bwrap, sandbox_problem


def main() -> int:
    problem = sandbox_problem(sys.executable)
    print(f"check_sandbox: {problem or 'ok'}")
    try:
        sandbox = Sandbox(checked=True)  # build it anyway, to show the full error
    except (OSError, RuntimeError) as err:
        print(f"set-up failed: {err}")
        return 1
    env = bwrap.sandbox_env(sandbox.python)
    files = {"/etc/passwd": 3, "/etc/group": 4, "/sandbox/main.py": 5}  # memfds, as in a run
    cmd = sandbox.command([sandbox.python, "main.py"], uid=bwrap.UID_BASE, file_fds=files, env=env, status_fd=7)
    print(shlex.join(cmd))
    result = sandbox.run_python("import os; print('uid', os.getuid(), 'cwd', os.getcwd())")
    print(f"probe: returncode={result.returncode} stdout={result.stdout.strip()!r}\n{result.stderr}")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
