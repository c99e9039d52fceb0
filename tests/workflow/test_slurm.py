"""The CI config on a real SLURM cluster, through the SLURM profile and executor plugin.

Two nodes brought up by ``.ci/slurm/up.sh`` (munge, MariaDB, slurmdbd, slurmctld, a slurmd
per node, both on this machine) run every job of the CI config cut to one run
(``one_run_config``: the toy base model, sampling, the dataset, the reference cache, one
training job, evaluation, the table; the light jobs run locally, the profile's localrules);
``sacct`` shows each submitted job COMPLETED with the memory, time and
CPUs the config's ``resources`` request; the table equals a local run's; a training job
cancelled mid-run is retried (profile ``retries``) and resumes from its checkpoint; and a
training job with ``nodes: 2`` runs one torchrun per node (srun) and writes the checkpoint of
the local run's job of the same world (2 ranks on one node). Needs root and the Debian packages
(``.ci/run`` installs them): elsewhere the tests skip with the reason, and under ``CI=true`` they
fail.

The whole CI DAG (both methods, two seeds, curves, figures) is tests/workflow/test_e2e.py's;
what SLURM adds to a job (submission, resources, retries, srun across nodes) is the same for
every rule, so one run of each rule shows it. The executor plugin sees a job done at its next
status check, and after a check that finds nothing done it waits 10 s longer for the next, so
each job is seen done well after it ends: the module's SLURM runs wait side by side, not one
after another.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import re
import shutil
import socket
import subprocess
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from workflow_helpers import (ONE_RUN_CHECKPOINT, ROOT, copy_project, job_counts, one_run_config, one_run_trained,
                              rule_resource_groups, seed_toy_base_model, skip_or_fail, snakemake)

from fpa.planning import judge

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("slurm_cluster")]  # one worker builds the cluster

DAEMONS = ("munged", "mariadbd", "mariadb-install-db", "slurmdbd", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "sacct", "squeue", "scancel")
# the test cluster's partition and the account root gets in it (.ci/slurm/up.sh)
SITE = {"slurm_partition": "ci", "gpu_partition": "ci", "slurm_account": "root"}
# the plugin's first status check after a submission (default 40 s): the CI jobs take seconds
FAST_STATUS = ("--slurm-init-seconds-before-status-checks", "2")


def _slurm_problem() -> str | None:
    if os.geteuid() != 0:
        return "needs root (the cluster's daemons run as root)"
    missing = [tool for tool in DAEMONS + CLIENTS if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not found (apt-get install slurm-wlm slurmdbd munge mariadb-server)"
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (the test extra pins it)"
    return None


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Environment for the SLURM commands of a two-node cluster, torn down after the module."""
    skip_or_fail(_slurm_problem(), "SLURM")
    state = tmp_path_factory.mktemp("slurm")
    started = time.perf_counter()
    up = subprocess.run([str(ROOT / ".ci" / "slurm" / "up.sh"), str(state), "2"], capture_output=True, text=True,
                        timeout=300)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        print(f"SLURM cluster up in {time.perf_counter() - started:.1f} s")
        yield {"SLURM_CONF": str(state / "slurm.conf")}
    finally:
        subprocess.run([str(ROOT / ".ci" / "slurm" / "down.sh"), str(state)], timeout=120)


def _site_profile(base: Path) -> Path:
    """The shipped SLURM profile with its site settings edited, as a user does."""
    profile = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    assert set(profile["default-resources"]) == set(SITE)
    profile["default-resources"] = SITE
    directory = base / "profile"
    directory.mkdir()
    (directory / "config.yaml").write_text(yaml.safe_dump(profile))
    return directory


@pytest.fixture(scope="module")
def runs(cluster, tmp_path_factory, ci_toy_base_model):
    """The CI config cut to one run (its training job 2 gloo ranks on one node), on SLURM and
    locally (from the CI toy base model, which the SLURM run builds), each in its own directory,
    side by side; once the local run has the training job's inputs, that job also on SLURM in two
    copies of them: on two nodes, and with more epochs, cancelled once its first checkpoint is
    written. The three SLURM runs wait on the plugin's status checks together while the local run
    computes (each run a thread's subprocess); each run's CompletedProcess, by name."""
    base = tmp_path_factory.mktemp("slurm-e2e")
    project = copy_project(base)
    config = one_run_config(project, {"processes": 2, "cpus_per_task": 2}, base / "one.yaml")
    two_nodes = one_run_config(project, {"nodes": 2, "processes": 1, "cpus_per_task": 1}, base / "two_nodes.yaml")
    longer = yaml.safe_load(config.read_text())
    longer["training"].update(epochs=20, checkpoint_every=5)
    (base / "longer.yaml").write_text(yaml.safe_dump(longer))
    on_slurm = ("--workflow-profile", str(_site_profile(base)), *FAST_STATUS)
    seed_toy_base_model(ci_toy_base_model, base / "local")
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        slurm = pool.submit(snakemake, project, base / "slurm", config, *on_slurm, env=cluster)
        # the training job's inputs: its target with every job from the training job on omitted
        snakemake(project, base / "local", config, ONE_RUN_CHECKPOINT, "--cores", "2", "--omit-from", "train")
        print(f"the training job's inputs, locally, in {time.perf_counter() - started:.0f} s")
        for name in ("two_nodes", "cancelled"):
            shutil.copytree(base / "local", base / name, symlinks=True)
        runs = {"slurm": slurm,
                "local": pool.submit(snakemake, project, base / "local", config, "--cores", "2"),
                # each test asserts that its own run succeeded
                "two_nodes": pool.submit(snakemake, project, base / "two_nodes", two_nodes, ONE_RUN_CHECKPOINT,
                                         *on_slurm, env=cluster, check=False),
                "cancelled": pool.submit(snakemake, project, base / "cancelled", base / "longer.yaml",
                                         ONE_RUN_CHECKPOINT, *on_slurm, env=cluster, check=False)}
        _cancel_once_checkpointed(base / "cancelled", cluster, runs["cancelled"])
        results = {name: run.result() for name, run in runs.items()}
    print(f"all runs in {time.perf_counter() - started:.0f} s")
    return SimpleNamespace(project=project, base=base, config=config, results=results)


def _output(run: subprocess.CompletedProcess) -> str:
    return run.stdout + run.stderr


def _cancel_once_checkpointed(workdir: Path, env: dict[str, str], run: Future) -> None:
    """``scancel`` the training job running in ``workdir`` once it has written its first checkpoint."""
    latest = workdir / "results" / "train" / "toy" / "offrl" / "1" / "work" / "latest"
    deadline = time.time() + 600
    while not latest.exists():
        assert not run.done(), run.result()  # the run ended before its first checkpoint
        assert time.time() < deadline, "no training checkpoint appeared"
        time.sleep(0.1)
    env = {**os.environ, **env}
    queue = subprocess.run(["squeue", "-h", "-o", "%i %Z"], env=env, capture_output=True, text=True,
                           check=True).stdout.splitlines()
    jobs = [job for job, directory in map(str.split, queue) if Path(directory).resolve() == workdir.resolve()]
    assert len(jobs) == 1, queue  # the one training job of this run
    subprocess.run(["scancel", jobs[0]], env=env, check=True)


def _sacct(env: dict[str, str], run_output: str) -> list[dict[str, str]]:
    """The SLURM jobs (allocations) of one Snakemake run, found by its run ID (the job name)."""
    run_id = re.search(r"SLURM run ID: (\S+)", run_output).group(1)
    fields = ["JobID", "State", "Comment", "ReqMem", "ReqCPUS", "Timelimit", "AllocTRES"]
    result = subprocess.run(["sacct", "-X", "--parsable2", "--noheader", "--units=M", "--starttime", "2000-01-01",
                             "--name", run_id, "--format", ",".join(fields)],
                            env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=True)
    return [dict(zip(fields, line.split("|"))) for line in result.stdout.splitlines()]


def _rule(job: dict[str, str]) -> str:
    """The rule of a job, from the comment the executor gives it: ``rule_<rule>[_wildcards_...]``."""
    return re.fullmatch(r"rule_(.+?)(?:_wildcards_.*)?", job["Comment"]).group(1)


def _minutes(timelimit: str) -> int:
    """``[D-]HH:MM:SS`` in minutes."""
    days, _, clock = timelimit.rpartition("-")
    hours, minutes, _ = map(int, clock.split(":"))
    return (int(days or 0) * 24 + hours) * 60 + minutes


def test_every_job_is_a_completed_slurm_job_with_the_configs_request(runs, cluster):
    """Every job but the local ones (rule all and the groups light and fetch, which run where snakemake
    runs: Snakemake says 'localrule') is a SLURM job."""
    output = _output(runs.results["slurm"])
    jobs = _sacct(cluster, output)
    planned = job_counts(output)
    planned.pop("total")
    groups = rule_resource_groups(runs.project / "workflow" / "rules")
    local = set(re.findall(r"^localrule (\w+):", output, flags=re.M))
    assert local == {"all"} | {rule for rule in planned if groups.get(rule) in ("light", "fetch")}
    submitted = {rule: count for rule, count in planned.items() if rule not in local}
    assert collections.Counter(map(_rule, jobs)) == submitted
    resources = judge([runs.config]).config["resources"]
    for job in jobs:
        wanted = resources[groups[_rule(job)]]
        assert job["State"] == "COMPLETED", job
        assert job["ReqMem"] == f"{wanted['mem_mb']}M", job
        assert int(job["ReqCPUS"]) == wanted["cpus_per_task"], job
        assert _minutes(job["Timelimit"]) == wanted["runtime"], job
        assert "gres/gpu" not in job["AllocTRES"], job


def test_slurm_table_equals_the_local_one(runs):
    tables = [runs.base / where / "results" / "tables" / "toy.csv" for where in ("slurm", "local")]
    slurm, local = (table.read_text() for table in tables)
    assert slurm.count("\n") == 3  # header, base, offrl
    assert slurm == local


def test_a_cancelled_training_job_is_retried_and_resumes(runs, cluster):
    workdir = runs.base / "cancelled"
    run = runs.results["cancelled"]
    assert run.returncode == 0, _output(run)[-4000:]
    assert [(_rule(job), job["State"].split()[0]) for job in _sacct(cluster, _output(run))] == [
        ("train", "CANCELLED"), ("train", "COMPLETED")]
    assert (workdir / ONE_RUN_CHECKPOINT / "model.safetensors").exists()
    assert "resumed from" in (workdir / "logs" / "train" / "toy" / "offrl" / "1.log").read_text()


def _sacct_steps(env: dict[str, str], job_id: str) -> list[dict[str, str]]:
    """The allocation and the steps of one SLURM job."""
    fields = ["JobID", "JobName", "State", "NNodes", "NTasks", "NodeList", "AllocCPUS", "ExitCode"]
    result = subprocess.run(["sacct", "--parsable2", "--units=M", "--starttime", "2000-01-01", "-j", job_id,
                             "--format", ",".join(fields)],
                            env={**os.environ, **env}, capture_output=True, text=True, timeout=60, check=True)
    print(result.stdout)  # the rows the note quotes
    return [dict(zip(fields, line.split("|"))) for line in result.stdout.splitlines()[1:]]


def test_a_two_node_training_job_trains_the_checkpoint_of_one_node(runs, cluster):
    # the local run's job: 2 ranks on one node
    single, single_state = one_run_trained(runs.base / "local")
    run = runs.results["two_nodes"]
    assert run.returncode == 0, _output(run)[-4000:]
    [job] = [job for job in _sacct(cluster, _output(run)) if _rule(job) == "train"]
    assert job["State"] == "COMPLETED", job
    rows = {row["JobID"].removeprefix(job["JobID"]): row for row in _sacct_steps(cluster, job["JobID"])}
    assert (rows[""]["NNodes"], rows[""]["State"]) == ("2", "COMPLETED"), rows
    # the job's own srun: one task (a torchrun) on each node
    assert (rows[".0"]["NNodes"], rows[".0"]["NTasks"], rows[".0"]["State"]) == ("2", "2", "COMPLETED"), rows
    assert sorted(rows[".0"]["NodeList"].split(",")) == sorted(["localhost", socket.gethostname().split(".")[0]]), rows

    multi, multi_state = one_run_trained(runs.base / "two_nodes")
    assert (single_state["world"], multi_state["world"]) == (2, 2)
    assert multi_state["summary"]["steps"] == single_state["summary"]["steps"] > 1
    assert single.keys() == multi.keys()
    for name in single:
        torch.testing.assert_close(multi[name], single[name], rtol=1e-5, atol=1e-6, msg=name)
