"""One judge, one grid: a Snakemake start and an ``fpa check-config`` each read a config file once,
judge it once and build its run grid once, counted in the real commands (no stand-in): Python's
audit hook sees every ``open`` of the file, with the code that opened it, and a profile hook counts
the calls that fill a whole config's schema defaults (one per judgement, ``fpa.config.check_config``)
and that expand the run grid (``fpa.config.runs.expand_runs``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# argv: the config file watched, then the module run (snakemake or fpa) and its arguments. Prints, as
# the last line of stdout: the file's reads by who opened it (fpa: code of the fpa package on the
# stack; else the command's own), the judgements and the grid builds.
COUNT_READS = """
import importlib.util, json, os, runpy, sys
from collections import Counter
watched, module, args = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3:]
package = os.path.dirname(importlib.util.find_spec("fpa").origin) + os.sep
reads, calls = Counter(), Counter()
COUNTED = {("config/schema.py", "fill_defaults"): "judged", ("config/runs.py", "expand_runs"): "grids"}

def on_event(event, args):
    if event == "open" and isinstance(args[0], (str, os.PathLike)) and os.path.realpath(args[0]) == watched:
        frame = sys._getframe(1)
        while frame is not None and not frame.f_code.co_filename.startswith(package):
            frame = frame.f_back
        reads["fpa" if frame is not None else module] += 1

def on_call(frame, event, arg):
    if event == "call" and frame.f_code.co_filename.startswith(package):
        counted = COUNTED.get((frame.f_code.co_filename[len(package):], frame.f_code.co_name))
        if counted:
            calls[counted] += 1

sys.addaudithook(on_event)
sys.setprofile(on_call)
sys.argv = [module, *args]
try:
    runpy.run_module(module, run_name="__main__")
except SystemExit as done:
    assert not done.code, done.code
sys.setprofile(None)
print(json.dumps({"reads": dict(reads), **calls}))
"""


def _counted(watched: Path, *command: str, cwd: Path = ROOT) -> dict:
    result = subprocess.run([sys.executable, "-c", COUNT_READS, str(watched), *command], cwd=cwd,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def _workdir(tmp_path: Path) -> Path:
    """A work directory with the default config, as the repository root has it."""
    (tmp_path / "config").mkdir()
    shutil.copy(ROOT / "config" / "config.yaml", tmp_path / "config" / "config.yaml")
    return tmp_path


def test_a_snakemake_start_reads_and_judges_the_default_config_once(tmp_path):
    workdir = _workdir(tmp_path)
    counted = _counted(workdir / "config" / "config.yaml", "snakemake", "-n", "--cores", "1", "--quiet",
                       "-s", str(ROOT / "Snakefile"), "-d", str(workdir))
    assert counted == {"reads": {"fpa": 1}, "judged": 1, "grids": 1}


def test_a_configfile_is_read_by_snakemakes_command_line_and_once_by_the_judge(tmp_path):
    """Snakemake's command line loads a --configfile before any workflow code runs; the workflow
    reads it once more, with the judge's limits, and judges that reading alone."""
    workdir = _workdir(tmp_path)
    config = ROOT / "config" / "config.yaml"
    counted = _counted(config, "snakemake", "-n", "--cores", "1", "--quiet", "-s", str(ROOT / "Snakefile"),
                       "-d", str(workdir), "--configfile", str(config))
    assert counted == {"reads": {"snakemake": 1, "fpa": 1}, "judged": 1, "grids": 1}


def test_check_config_reads_and_judges_a_config_once(tmp_path):
    config = tmp_path / "config.yaml"
    shutil.copy(ROOT / "config" / "config.yaml", config)
    assert _counted(config, "fpa", "check-config", str(config)) == {"reads": {"fpa": 1}, "judged": 1, "grids": 1}
