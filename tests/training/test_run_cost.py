"""The cost of a config before it runs (``fpa.memory.cost``): disk and GPU-hours against their formulas."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fpa.config.runs import Run, expand_runs
from fpa.memory.architecture import Architecture
from fpa.memory.cost import GB, Assumptions, disk_warning, plan_costs, training_cost
from fpa.planning import load_config_file

ROOT = Path(__file__).resolve().parents[2]
ARCH = Architecture(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, head_dim=16, tie_word_embeddings=False)
CONFIG = {"dataset": {"source": "toy", "n_problems": 1000, "validation_fraction": 0.1, "k": 8}}


def _run(**training) -> Run:
    base = {"epochs": 2, "batch_problems": 8, "max_length": 512, "precision": "bf16", "snapshot_every": 100,
            "gradient_checkpointing": True}
    return Run("fpa", "fpa", {}, {**base, **training}, seeds=(1, 2))


def test_training_disk_and_gpu_hours_follow_their_formulas():
    cost = training_cost(CONFIG, "m", [_run()], ARCH, Assumptions())
    steps = 2 * math.ceil(900 / 8)  # 226 optimizer steps: 2 snapshots, the final checkpoint, a resumable one
    assert cost.jobs == 2
    assert cost.disk_bytes == 2 * ((steps // 100 + 1) * 2 * ARCH.params + 12 * ARCH.params)
    tokens = steps * 8 * 8 * 512 * 0.5
    assert cost.gpu_hours == pytest.approx(2 * tokens * 8 * ARCH.params / (0.35 * 989e12) / 3600, rel=1e-12)


def test_a_bf16_run_writes_its_snapshots_in_half_the_disk_of_an_fp32_run():
    bf16, fp32 = (training_cost(CONFIG, "m", [_run(precision=p)], ARCH, Assumptions()) for p in ("bf16", "fp32"))
    resumable = 2 * 12 * ARCH.params
    assert (fp32.disk_bytes - resumable) == 2 * (bf16.disk_bytes - resumable)


def test_paper_plan_has_every_job_family_and_warns_over_the_disk_budget():
    config = load_config_file(ROOT / "config" / "paper.yaml")
    runs = expand_runs(config, where="paper.yaml")
    costs = plan_costs(config, runs, ROOT)
    assert {c.family for c in costs} == {"sample_offline", "cache_reference", "train", "evaluate", "curve"}
    assert all(c.disk_bytes > 0 and c.gpu_hours > 0 for c in costs)
    total = sum(c.disk_bytes for c in costs) / GB
    assert disk_warning(config, runs, ROOT) is None  # no budget set
    config["budget"] = {"disk_gb": total / 2}
    assert disk_warning(config, runs, ROOT).startswith(f"disk: the config's jobs write ~{total:,.0f} GB > budget.disk_gb")
    config["budget"] = {"disk_gb": total * 2}
    assert disk_warning(config, runs, ROOT) is None


def test_the_rlvr_config_fits_its_gpus_with_trls_colocated_vllm_share():
    """The RLVR config's offline run trains under FSDP (DDP did not fit 80 GB), and its online runs are
    planned with the GPU share TRL's colocated vLLM engine takes."""
    from fpa.memory.plan import GIB, plan_memory
    from fpa.online.base import COLOCATED_VLLM_SHARE

    config = load_config_file(ROOT / "config" / "paper-rlvr.yaml")
    gpu = int(config["gpu_memory_gb"] * GIB)
    estimates = plan_memory(config, expand_runs(config, where="paper-rlvr.yaml"), gpu, ROOT)
    training = [e for e in estimates if e.rule in ("train", "train_online")]
    assert {e.rule for e in training} == {"train", "train_online"}
    assert all(e.fits for e in training), [(e.rule, e.run, e.per_gpu / GIB) for e in training]
    for online in (e for e in training if e.rule == "train_online"):
        assert online.components["colocated_vllm"] == int(COLOCATED_VLLM_SHARE * gpu)
        assert online.per_gpu > online.components["colocated_vllm"]
