"""The cost of a config before it runs (``fpa.memory.cost``): disk and GPU-hours against their formulas."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fpa.config.runs import Run, expand_runs
from fpa.memory.architecture import Architecture
from fpa.memory.cost import GB, Assumptions, disk_warning, plan_costs, training_cost
from fpa.planning.figures import planned_curves
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
    curves = planned_curves(config, runs)
    costs = plan_costs(config, runs, ROOT, curves=curves)
    assert {c.family for c in costs} == {"sample_offline", "cache_reference", "train", "evaluate", "curve"}
    assert all(c.disk_bytes > 0 and c.gpu_hours > 0 for c in costs)
    total = sum(c.disk_bytes for c in costs) / GB
    assert disk_warning(config, runs, ROOT, curves=curves) is None  # no budget set
    config["budget"] = {"disk_gb": total / 2}
    assert disk_warning(config, runs, ROOT, curves=curves).startswith(f"disk: the config's jobs write ~{total:,.0f} GB > budget.disk_gb")
    config["budget"] = {"disk_gb": total * 2}
    assert disk_warning(config, runs, ROOT, curves=curves) is None


def test_the_rlvr_config_fits_its_gpus_with_trls_colocated_vllm_share():
    """The RLVR config's offline run trains under FSDP (DDP did not fit 80 GB), and its online runs are
    planned with the GPU share TRL's colocated vLLM engine takes."""
    from fpa.memory.plan import GIB, plan_memory
    from fpa.training.online.settings import COLOCATED_VLLM_SHARE

    config = load_config_file(ROOT / "config" / "paper-rlvr.yaml")
    gpu = int(config["gpu_memory_gb"] * GIB)
    estimates = plan_memory(config, expand_runs(config, where="paper-rlvr.yaml"), gpu, ROOT)
    training = [e for e in estimates if e.rule in ("train", "train_online")]
    assert {e.rule for e in training} == {"train", "train_online"}
    assert all(e.fits for e in training), [(e.rule, e.run, e.per_gpu / GIB) for e in training]
    for online in (e for e in training if e.rule == "train_online"):
        assert online.components["colocated_vllm"] == int(COLOCATED_VLLM_SHARE * gpu)
        assert online.per_gpu > online.components["colocated_vllm"]


def _gpu_record(path: Path, mode: str, users_step: dict | None) -> Path:
    measurements = {"users_step": users_step} if users_step else {}
    path.write_text(json.dumps({"mode": mode, "gpu": "NVIDIA H200", "commit": "abc1234",
                                "measurements": measurements}))
    return path


def test_the_planner_takes_training_mfu_from_the_gpu_record_and_names_it(tmp_path):
    measured = {"status": "ok", "result": {"planner_train_mfu": 0.41}}
    full = Assumptions.calibrated(_gpu_record(tmp_path / "gpu.json", "full", measured))
    assert full.train_mfu == 0.41
    assert "train_mfu_source: measured: gpu.json, users_step on NVIDIA H200 at abc1234" in "\n".join(full.lines())
    given = Assumptions.calibrated(tmp_path / "gpu.json", train_mfu=0.2)
    assert (given.train_mfu, given.train_mfu_source) == (0.2, "given (--train-mfu)")
    # a tiny CPU record, a record without the measurement, no record: the stated default
    for record in (_gpu_record(tmp_path / "tiny.json", "tiny", measured), _gpu_record(tmp_path / "old.json", "full", None),
                   tmp_path / "absent.json"):
        default = Assumptions.calibrated(record)
        assert (default.train_mfu, default.train_mfu_source) == (Assumptions().train_mfu, Assumptions().train_mfu_source)
    cost = training_cost(CONFIG, "m", [_run()], ARCH, full)
    assert cost.gpu_hours == pytest.approx(training_cost(CONFIG, "m", [_run()], ARCH, Assumptions()).gpu_hours
                                           * 0.35 / 0.41, rel=1e-12)
