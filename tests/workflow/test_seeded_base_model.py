"""The CI toy base model that the workflow tests copy into their DAGs (fixture ``ci_toy_base_model``)
stands for the job only where the config gives the job the same params: another model is built."""

from __future__ import annotations

import yaml
from workflow_helpers import CI_CONFIG, copy_project, job_counts, seed_toy_base_model, snakemake


def test_a_seeded_base_model_is_rebuilt_only_for_other_params(tmp_path, ci_toy_base_model):
    project = copy_project(tmp_path)
    other = yaml.safe_load(CI_CONFIG.read_text())
    other["models"]["toy"]["toy"]["seed"] = 7
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(other))
    planned = {}
    for name, config in (("same", CI_CONFIG), ("other", tmp_path / "other.yaml")):
        seed_toy_base_model(ci_toy_base_model, tmp_path / name)
        result = snakemake(project, tmp_path / name, config, "-n", "--cores", "1")
        planned[name] = job_counts(result.stdout + result.stderr).get("toy_base_model", 0)
    assert planned == {"same": 0, "other": 1}
