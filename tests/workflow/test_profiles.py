"""The profiles take effect: Snakemake reads the workflow's default profile (profiles/default, beside
the top-level Snakefile) and says so; the light jobs (rule all, the downloads and resource group
light: checks, tables, figures) are local rules, run where snakemake runs, and every other job goes to
a queue; the SLURM profile keeps every setting of the default one."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import yaml
from workflow_helpers import ROOT, as_from_the_root, rule_resource_groups

PROFILES = ROOT / "profiles"
NOTICE = "Using workflow specific profile {} for setting default command line arguments."
LOCAL_GROUPS = {"light", "fetch"}


def _dry_run(tmp_path, cwd):
    tmp_path.mkdir(exist_ok=True)
    as_from_the_root(tmp_path)
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-n", "--cores", "1",
                           "-d", str(tmp_path)], capture_output=True, text=True, timeout=600, cwd=cwd)


def test_a_dry_run_from_the_root_uses_the_default_profile(tmp_path):
    result = _dry_run(tmp_path, ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.splitlines()[0] == NOTICE.format("profiles/default")


def test_a_dry_run_from_elsewhere_uses_the_default_profile_beside_the_snakefile(tmp_path):
    result = _dry_run(tmp_path / "work", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stderr.splitlines()[0] == NOTICE.format(PROFILES / "default")


# The workflow as Snakemake loads it (its API): each rule defined, and whether it is a local rule. A dry run
# does not say (it prints "localrule" only where a cluster runs the other jobs: tests/workflow/test_slurm.py).
LOAD = """
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings
with SnakemakeApi(OutputSettings()) as api:
    workflow = api.workflow(ResourceSettings(cores=1), ConfigSettings(configfiles=[Path(sys.argv[1])]),
                            snakefile=Path(sys.argv[2]), workdir=Path(sys.argv[3]))._workflow
    print(json.dumps({rule.name: rule.name in workflow._localrules for rule in workflow.rules}))
"""


def test_the_light_jobs_and_only_they_are_local_rules(tmp_path):
    """Snakemake runs locally rule all and the rules of the groups light and fetch, which say only their group
    (no rule file writes localrule: the Snakefile declares them, fpa.resources.local_rules)."""
    as_from_the_root(tmp_path)
    loaded = subprocess.run([sys.executable, "-c", LOAD, str(ROOT / "config" / "paper-rehearsal.yaml"),
                             str(ROOT / "Snakefile"), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    is_local = json.loads(loaded.stdout.splitlines()[-1])
    groups = rule_resource_groups()
    assert is_local == {rule: rule == "all" or groups.get(rule) in LOCAL_GROUPS for rule in is_local}
    assert {"fetch_data", "fetch_model", "build_models", "aggregate", "figure", "check_prompt_budget"} <= {
        rule for rule, local in is_local.items() if local}
    rules_text = "".join(path.read_text() for path in (ROOT / "workflow" / "rules").glob("*.smk"))
    assert not re.search(r"^\s+localrule:", rules_text, flags=re.M)  # a rule says only its group


def test_the_slurm_profile_keeps_the_default_profiles_settings():
    default = yaml.safe_load((PROFILES / "default" / "config.yaml").read_text())
    slurm = yaml.safe_load((PROFILES / "slurm" / "config.yaml").read_text())
    assert {key: slurm.get(key) for key in default if key != "latency-wait"} == {
        key: value for key, value in default.items() if key != "latency-wait"}
    assert slurm["latency-wait"] >= default["latency-wait"]  # a shared file system shows outputs late
