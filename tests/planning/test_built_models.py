"""The rehearsal's models built by a rule (``data.build_models``, config/paper-rehearsal.yaml): rule
build_models writes the model mirror that fetch_model reads, from what a model's build reads alone;
a config that also names a model mirror is refused. (The build and the whole DAG:
tests/workflow/test_rehearsal.py, slow.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fpa.errors import ConfigError
from fpa.paths import BUILT_MODEL_MIRROR
from fpa.planning import judge

ROOT = Path(__file__).resolve().parents[2]
REHEARSAL = ROOT / "config" / "paper-rehearsal.yaml"


def test_the_rehearsal_plans_its_models_built_then_fetched_from_their_mirror(tmp_path):
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.yaml").write_text((ROOT / "config" / "config.yaml").read_text())
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--cores", "1", "-d", str(tmp_path),
                             "--configfile", str(REHEARSAL)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    fetches = [line for line in result.stdout.splitlines() if "python -m fpa fetch-model " in line]
    assert len(fetches) == 3 and all(f"--model-mirror {BUILT_MODEL_MIRROR} " in line for line in fetches)
    assert result.stdout.count("python -m fpa build-models ") == 1
    assert f"input: {BUILT_MODEL_MIRROR}\n" in result.stdout


def test_a_models_build_reads_its_name_shapes_and_prompt_not_its_training():
    plan = judge([REHEARSAL])
    built = json.loads(plan.data.built_models(None))["models"]
    assert set(built) == set(plan.config["models"])
    read = {"hub_id", "architecture", "prompt_template", "chat_template"}  # chat_template: where a model has one
    assert all(read - {"chat_template"} <= set(model) <= read for model in built.values())
    assert plan.model_mirror == BUILT_MODEL_MIRROR and plan.data.built_mirror(None) == [BUILT_MODEL_MIRROR]


def test_built_models_and_a_model_mirror_are_refused_together():
    with pytest.raises(ConfigError, match=r"paper-rehearsal\.yaml with --config: data\.model_mirror: the models are "
                                          r"built into resources/built-models/hub \(data\.build_models: true\); "
                                          r"expected no model_mirror, got 'hub'$"):
        judge([REHEARSAL], overrides={"data": {"model_mirror": "hub"}})
