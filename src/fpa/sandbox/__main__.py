"""``python -m fpa.sandbox``: check the sandbox here, say what bounds a run's total memory,
and show one run's command line."""

from __future__ import annotations

import shlex
import sys

from fpa.sandbox import Sandbox, bwrap, sandbox_problem
from fpa.sandbox.check import aggregate_report


def main() -> int:
    problem = sandbox_problem(sys.executable)
    print(f"check_sandbox: {problem or 'ok'}")
    print("\n".join(aggregate_report()))
    try:
        sandbox = Sandbox(checked=True)  # build it anyway, to show the full error
    except (OSError, RuntimeError) as err:
        print(f"set-up failed: {err}")
        return 1
    env = bwrap.sandbox_env(sandbox.python)
    files = {"/etc/passwd": 3, "/etc/group": 4, "/sandbox/main.py": 5}  # memfds, as in a run
    cmd = sandbox.command([sandbox.python, "main.py"], uid=bwrap.UID_BASE, file_fds=files, env=env, status_fd=7)
    guard = sandbox.aggregate.start(sandbox.limits)
    guard.close()  # made only to show its command prefix
    print(shlex.join([*guard.prefix, *cmd]))
    result = sandbox.run_python("import os; print('uid', os.getuid(), 'cwd', os.getcwd())")
    print(f"probe: returncode={result.returncode} stdout={result.stdout.strip()!r}\n{result.stderr}")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main())
