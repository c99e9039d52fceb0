"""The precision policy has one owner (issue 58): ``fpa.precision`` names each floating-point format once and
says which format each use takes; every other module asks it, and none spells a torch dtype name itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch
import yaml

from fpa.memory.training import compute_weights_dtype, fsdp_param_dtype, reference_cache_dtype
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


def test_the_gather_formats_are_the_ones_the_schema_lets_fsdp_param_dtype_name():
    schema = yaml.safe_load((SRC.parents[1] / "workflow" / "schemas" / "config.schema.yaml").read_text())
    allowed = schema["$defs"]["training"]["properties"]["fsdp_param_dtype"]["enum"]
    assert sorted(FORMATS[f].torch_name for f in GATHER_FORMATS) == sorted(set(allowed) - {"auto"})


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
