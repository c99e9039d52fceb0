"""The precision policy has one owner (issue 58): ``fpa.precision`` names each floating-point format once and
says which format each use takes; every other module asks it, and none spells a torch dtype name itself."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import yaml
from hostile_input.fuzz_config import Verdict, check_config_verdict

from fpa.config.schema import ENUM_FROM, load_schema
from fpa.memory.training import compute_weights_dtype, fsdp_param_dtype, reference_cache_dtype
from fpa.planning.judge import judge_config, merge
from fpa.planning.reference import cache_settings
from fpa.precision import (BODY_FORMATS, CACHE_FORMATS, FORMATS, GATHER_FORMATS, autocast_dtype, element_bytes,
                           format_of, torch_dtype, torch_name)
from fpa.training.checkpoints import saved_dtype

SRC = Path(__file__).resolve().parents[1] / "src" / "fpa"


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_is_torchs_dtype_of_its_size_under_either_spelling(name):
    dtype = torch_dtype(name)
    assert dtype is getattr(torch, torch_name(name)) and torch.tensor([], dtype=dtype).element_size() == \
        element_bytes(name) == element_bytes(torch_name(name))
    assert format_of(torch_name(name)) == format_of(name) == name


def test_each_use_takes_its_format():
    assert (autocast_dtype("bf16"), autocast_dtype("fp32")) == (torch.bfloat16, None)
    assert (saved_dtype("bf16"), saved_dtype("fp32")) == (torch.bfloat16, torch.float32)
    assert fsdp_param_dtype({"precision": "bf16"}) == "bfloat16" and fsdp_param_dtype({"precision": "fp32"}) == "float32"
    assert compute_weights_dtype({"precision": "bf16", "parallel": "ddp"}) == "float32"
    assert reference_cache_dtype({}, "cuda") == "bfloat16" and reference_cache_dtype({}, "cpu") == "float32"
    assert set(BODY_FORMATS) <= set(CACHE_FORMATS)


def _precision_keys() -> dict[str, dict]:
    """The training keys whose choices are the precision policy's formats, by the schema (x-enum-from)."""
    return {key: node for key, node in load_schema()["$defs"]["training"]["properties"].items()
            if node.get(ENUM_FROM, "").startswith("fpa.precision:")}


def test_the_schema_reads_every_precision_keys_choices_from_the_policy():
    keys = _precision_keys()
    assert sorted(keys) == ["fsdp_param_dtype", "fsdp_reduce_dtype", "head_precision", "precision"]
    assert keys["fsdp_param_dtype"]["enum"] == ["auto", *sorted(GATHER_FORMATS)]
    assert keys["precision"]["enum"] == sorted(BODY_FORMATS)
    text = (SRC.parents[1] / "workflow" / "schemas" / "config.schema.yaml").read_text()
    assert [name for name in (*FORMATS, *(spec.torch_name for spec in FORMATS.values()))
            if re.search(rf"enum: \[[^]]*\b{name}\b", text)] == []


@pytest.mark.parametrize("key", ["precision", "head_precision", "fsdp_param_dtype", "fsdp_reduce_dtype"])
def test_check_config_takes_a_formats_one_name_and_refuses_torchs(tmp_path, key):
    """One spelling (issue 58): torch's name of a format is refused in one line naming the key and the
    choices, not read as an alias; the format's own name is accepted."""
    choices = _precision_keys()[key]["enum"]
    format_ = next(name for name in choices if name in FORMATS)
    for value, expected in ((format_, Verdict(True)),
                            (torch_name(format_), Verdict(False, f"{tmp_path / 'config.yaml'}: training.{key}: "
                                                                 f"expected one of {choices}, got "
                                                                 f"{torch_name(format_)!r}"))):
        config = merge(yaml.safe_load((SRC.parents[1] / "config" / "config.yaml").read_text()),
                       {"training": {key: value}})
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        assert check_config_verdict(tmp_path / "config.yaml") == expected


def test_a_training_job_reads_the_configs_formats_in_the_names_every_run_before_read():
    """The config's one spelling reaches the trainer as torch's names (``fpa.planning.stage.job_training``):
    a finished run's --run-json, its params, is unchanged, and so is the cache key of an explicit format."""
    config = merge(yaml.safe_load((SRC.parents[1] / "config" / "config.yaml").read_text()),
                   {"training": {"fsdp_param_dtype": "bf16"}})
    plan = judge_config(config, "config.yaml")
    run = json.loads(plan.train.run_json(SimpleNamespace(model="toy", method="fpa", seed="42")))
    assert (run["training"]["fsdp_param_dtype"], run["training"]["fsdp_reduce_dtype"]) == ("bfloat16", "float32")
    assert plan.runs[("toy", "fpa")].training["fsdp_reduce_dtype"] == "fp32"  # the config's spelling
    explicit, auto = ({"max_length": 8, "precision": "bf16", "attention": "packed", "parallel": "fsdp",
                       "head_precision": "auto", "fsdp_param_dtype": dtype} for dtype in ("bf16", "auto"))
    assert cache_settings(explicit, "cuda") == cache_settings(auto, "cuda")


def test_a_format_a_use_does_not_take_is_refused_naming_its_key():
    with pytest.raises(ValueError, match=r"training.precision: expected one of \['bf16', 'fp32', 'bfloat16', "
                                         r"'float32'\], got 'fp16'"):
        autocast_dtype("fp16")
    with pytest.raises(ValueError, match="dtype: expected one of"):
        torch_dtype("int8", CACHE_FORMATS)


def test_no_other_module_spells_a_torch_dtype_name():
    names = {spec.torch_name for spec in FORMATS.values()}
    spelled = [f"{path.relative_to(SRC)}:{node.lineno}" for path in sorted(SRC.rglob("*.py"))
               if path.name != "precision.py" or path.parent != SRC
               for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Constant) and node.value in names]
    assert spelled == []
