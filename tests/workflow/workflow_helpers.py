"""What the workflow tests share: a copy of the project, a Snakemake call, a dry run of a shipped
config as from the repository root, the dry-run job counts, the rules' resource groups, the
resources a dry run plans, and the one-run training config whose checkpoint the multi-process
tests compare."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data"))
# an end-to-end run on the data mirror's 20-record samples: slow, and only where the mirror is
TINY_MIRROR_RUN = [pytest.mark.slow,
                   pytest.mark.skipif(not (MIRROR / "tiny").is_dir(), reason=f"no tiny data mirror at {MIRROR}/tiny")]


def copy_project(base: Path) -> Path:
    """A copy of what the workflow runs from (so that a test can edit its code)."""
    project = base / "project"
    project.mkdir()
    for name in ("Snakefile", "profiles", "workflow", "config", "envs", "src", ".test"):
        source = ROOT / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, project / name)
    return project


ONE_RUN_CHECKPOINT = "results/train/toy/offrl/1/checkpoint"
CI_CONFIG = ROOT / ".test" / "config_ci" / "config.yaml"
TOY_BASE_MODEL = "results/models/toy/base"


def seed_toy_base_model(built: Path, workdir: Path) -> None:
    """Copy the toy base model job that ran in ``built`` (fixture ``ci_toy_base_model``) into
    ``workdir``: its output and provenance, its log and benchmark record (the cost table's), and
    Snakemake's record of it, which re-runs the job where a config gives the model other params."""
    metadata = Path(".snakemake") / "metadata"
    for path in (TOY_BASE_MODEL, f"{TOY_BASE_MODEL}.prov.json", "logs/toy_base_model/toy.log",
                 "logs/benchmarks/toy_base_model/toy.tsv", *(metadata / entry.name for entry in
                                                            (built / metadata).iterdir())):
        source, target = built / path, workdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, target)


def one_run_config(project: Path, resources: dict, path: Path) -> Path:
    """The CI config cut to the offrl run on seed 1, one epoch, no curves or figures, with
    ``resources.train`` (its other resources kept); written to ``path``."""
    config = yaml.safe_load((project / ".test" / "config_ci" / "config.yaml").read_text())
    for key in ("figures", "future_policy", "entanglement", "curve_benchmarks"):
        config.pop(key)
    config.update(tables={"toy": ["toy6"]}, methods={"offrl": config["methods"]["offrl"]}, seeds=[1],
                  resources={**config.get("resources", {}), "train": resources})
    config["training"].update(epochs=1, snapshot_every=0)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def one_run_trained(workdir: Path) -> tuple[dict, dict]:
    """The weights (name -> tensor) and the training state of ``ONE_RUN_CHECKPOINT``."""
    from safetensors.torch import load_file

    from fpa.io import read_json

    checkpoint = workdir / ONE_RUN_CHECKPOINT
    state = read_json(checkpoint / "training_state.json")
    return load_file(str(checkpoint / "model.safetensors")), state


def snakemake(project: Path, workdir: Path, config: Path, *args: str, check: bool = True,
              background: bool = False, timeout: int = 1200, env: dict[str, str] | None = None):
    """``snakemake -s project/Snakefile -d workdir ... --configfile config`` with the project's
    package, in this environment plus ``env``."""
    # --configfile takes several values: it goes last, so that a target is not read as a config file
    command = [sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile"), "-d", str(workdir), *args,
               "--configfile", str(config)]
    # jobs' `python -m fpa` is this interpreter (the test's venv, activated or not)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(project / "src"), "PATH": path}
    if background:
        return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}")
    return result


def _directory_outputs(rules_dir: Path) -> re.Pattern:
    """The outputs the rules declare ``directory(paths.<NAME>)``: their ``fpa.paths`` templates as one pattern."""
    from fpa import paths

    names = sorted({name for path in rules_dir.glob("*.smk")
                    for name in re.findall(r"directory\(paths\.(\w+)\)", path.read_text())})
    templates = (re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(getattr(paths, name))) for name in names)
    return re.compile("|".join(templates))


def complete_by_touch(project: Path, workdir: Path, config: Path) -> None:
    """Every job that ``config`` plans recorded as run, as Snakemake records a run (its metadata: params,
    code fingerprints, shell text): each planned output made empty (a directory where the rule
    declares one), then ``--touch``. A later dry run plans only what a change re-runs."""
    plan = snakemake(project, workdir, config, "-n", "--cores", "1")
    is_directory = _directory_outputs(project / "workflow" / "rules")
    for line in re.findall(r"^\s+(?:output|benchmark): (.+)$", plan.stdout + plan.stderr, flags=re.M):
        for output in line.split(", "):
            path = workdir / output
            if is_directory.fullmatch(output):
                path.mkdir(parents=True, exist_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
    snakemake(project, workdir, config, "--touch", "--forceall", "--cores", "1")


@contextlib.contextmanager
def edited(source: Path):
    """``source`` with a statement appended (a code edit that changes nothing it does), restored after.
    A comment would not do: the code fingerprint reads code, not comments."""
    original = source.read_text()
    source.write_text(original + "\n_EDITED = True\n")
    try:
        yield
    finally:
        source.write_text(original)


def as_from_the_root(workdir: Path) -> None:
    """Give ``workdir`` the default ``config/config.yaml``, as the repository root has it: a
    ``--configfile`` must replace it, not be merged into it (keys the default has, such as the toy
    model, benchmarks and table, must not reach another experiment)."""
    (workdir / "config").mkdir(exist_ok=True)
    shutil.copy(ROOT / "config" / "config.yaml", workdir / "config" / "config.yaml")


def plan_from_the_root(workdir: Path, configfile: Path, *extra: str) -> subprocess.CompletedProcess:
    """``snakemake -n --cores 1 --configfile configfile -d workdir *extra`` from the repository root."""
    as_from_the_root(workdir)
    return subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(configfile),
                           "-d", str(workdir), *extra], capture_output=True, text=True, timeout=600, cwd=ROOT)


def job_counts(text: str) -> dict[str, int]:
    """Snakemake's 'Job stats' table of a dry run, ``total`` included; {} when nothing is to be done."""
    if "Nothing to be done" in text:
        return {}
    counts = {}
    for line in text.split("Job stats:")[1].splitlines()[3:]:
        match = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
        if not match:
            break
        counts[match.group(1)] = int(match.group(2))
    return counts


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def skip_or_fail(problem: str | None, what: str) -> None:
    """Skip (locally) or fail (under CI, which must exercise ``what``) when ``problem`` is set."""
    if problem is None:
        return
    if in_ci():
        pytest.fail(f"{what} unavailable under CI: {problem}", pytrace=False)
    pytest.skip(f"{what} unavailable: {problem}")


def rule_resource_groups(rules_dir: Path = ROOT / "workflow" / "rules") -> dict[str, str]:
    """Rule name -> the config ``resources`` group its jobs request (``PLAN.resources("<group>")``)."""
    groups = {}
    for path in sorted(rules_dir.glob("*.smk")):
        for block in re.split(r"^\s*rule (?=\w+:)", path.read_text(), flags=re.M)[1:]:
            match = re.search(r'PLAN\.resources\("(\w+)"\)', block)
            if match:
                groups[block.split(":", 1)[0]] = match.group(1)
    return groups


def planned_resources(text: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of each job a dry run lists, values as Snakemake prints them."""
    jobs = []
    for block in re.split(r"^(?:local)?rule (?=\w+:)", text, flags=re.M)[1:]:
        match = re.search(r"^\s+resources: (.*)$", block, flags=re.M)
        if match:
            pairs = (item.split("=", 1) for item in match.group(1).split(", "))
            jobs.append((block.split(":", 1)[0], dict(pairs)))
    return jobs


def _shell_commands(text: str, command: str) -> list[list[str]]:
    """The words of each planned ``python -m fpa <command>`` (a dry run with ``-p``)."""
    lines = [shlex.split(line) for line in text.splitlines() if f"python -m fpa {command} " in line]
    return [words[words.index("fpa"):] for words in lines]


def selections_of_trained_runs(text: str) -> tuple[dict[str, tuple[str, str]], set[str]]:
    """From a dry run with ``-p``: each select-checkpoint job's ``--snapshots`` with its
    ``--benchmark`` (name, records), and the ``--snapshots`` of every train job."""
    selections = {}
    for words in _shell_commands(text, "select-checkpoint"):
        at = words.index("--benchmark")
        selections[words[words.index("--snapshots") + 1]] = (words[at + 1], words[at + 2])
    trained = {words[words.index("--snapshots") + 1] for words in _shell_commands(text, "train")}
    return selections, trained
