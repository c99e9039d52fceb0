"""The profiles take effect: Snakemake reads the workflow's default profile (profiles/default, beside
the top-level Snakefile) and says so; the light jobs (rule all, the downloads and resource group
light: checks, tables, figures) are local rules, run where snakemake runs, and every other job goes to
a queue; the SLURM profile keeps every setting of the default one."""

from __future__ import annotations

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


def _local_rules() -> set[str]:
    """The rules that declare ``localrule: True``, in the Snakefile and the rule files."""
    paths = [ROOT / "Snakefile", *(ROOT / "workflow" / "rules").glob("*.smk")]
    blocks = (block for path in paths for block in re.split(r"^\s*rule (?=\w+:)", path.read_text(), flags=re.M)[1:])
    return {block.split(":", 1)[0] for block in blocks if re.search(r"^\s+localrule: True$", block, flags=re.M)}


def test_the_light_jobs_and_only_they_are_local_rules():
    groups = rule_resource_groups()
    assert _local_rules() == {"all"} | {rule for rule, group in groups.items() if group in LOCAL_GROUPS}
    assert {"fetch_data", "fetch_model", "aggregate", "figure", "check_prompt_budget"} <= _local_rules()


def test_the_slurm_profile_keeps_the_default_profiles_settings():
    default = yaml.safe_load((PROFILES / "default" / "config.yaml").read_text())
    slurm = yaml.safe_load((PROFILES / "slurm" / "config.yaml").read_text())
    assert {key: slurm.get(key) for key in default if key != "latency-wait"} == {
        key: value for key, value in default.items() if key != "latency-wait"}
    assert slurm["latency-wait"] >= default["latency-wait"]  # a shared file system shows outputs late
