"""The cost of a config before it runs (``fpa.memory.cost``): disk and GPU-hours against their formulas."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fpa.config.runs import Run
from fpa.memory.architecture import Architecture
from fpa.memory.cost import GB, Assumptions, plan_costs, training_cost
from fpa.memory.summary import cost_lines, disk_warnings, free_gb
from fpa.planning import judge

ROOT = Path(__file__).resolve().parents[2]
ARCH = Architecture(vocab_size=1000, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                    num_attention_heads=4, num_key_value_heads=4, head_dim=16, tie_word_embeddings=False)
CONFIG = {"dataset": {"source": "toy", "n_problems": 1000, "validation_fraction": 0.1, "k": 8}}


def _run(**training) -> Run:
    base = {"epochs": 2, "batch_problems": 8, "max_length": 512, "precision": "bf16", "snapshot_every": 100,
            "gradient_checkpointing": True, "checkpoint_every_layers": 1, "attention": "packed"}
    return Run("fpa", "fpa", {}, {**base, **training}, seeds=(1, 2))


def _flops_record(path: Path) -> Path:
    """A FLOP count as benchmarks/training/flops.py writes it: 60 useful of 120 executed padded with
    checkpointing (100 without), of 80 packed with it (64 without)."""
    cases = [{"method": "offrl", "attention": attention, "gradient_checkpointing": checkpointing, "total": total}
             for attention, checkpointing, total in (("masked", True, 120), ("masked", False, 100),
                                                     ("packed", True, 80), ("packed", False, 64))]
    path.write_text(json.dumps({"commit": "abc1234", "useful": {"step": 60}, "cases": cases}))
    return path


def test_training_disk_and_gpu_hours_follow_their_formulas(tmp_path):
    cost = training_cost(CONFIG, "m", [_run()], ARCH, Assumptions(), _flops_record(tmp_path / "flops.json"))
    steps = 2 * math.ceil(900 / 8)  # 226 optimizer steps: 2 snapshots, the final checkpoint, a resumable one
    assert cost.jobs == 2
    assert cost.disk_bytes == 2 * ((steps // 100 + 1) * 2 * ARCH.params + 12 * ARCH.params)
    tokens = steps * 8 * 8 * 512 * 0.5
    share = 60 / 80  # packed, checkpointing every layer
    assert cost.gpu_hours == pytest.approx(2 * tokens * 6 * ARCH.params / (0.35 * share * 989e12) / 3600, rel=1e-12)
    assert "75 % of the FLOPs useful (flops.json: packed, checkpointing every 1 layer(s), at abc1234)" in cost.note


@pytest.mark.parametrize(("training", "share"), [
    ({"attention": "masked"}, 60 / 120),
    ({"attention": "causal"}, 60 / 120),  # the padded rows of masked, without the mask
    ({"attention": "packed", "gradient_checkpointing": False}, 60 / 64),
    ({"attention": "masked", "checkpoint_every_layers": 2}, 60 / (100 + 20 / 2)),
])
def test_training_gpu_hours_count_the_useful_share_of_the_layout_and_its_recomputation(tmp_path, training, share):
    record = _flops_record(tmp_path / "flops.json")
    packed = training_cost(CONFIG, "m", [_run()], ARCH, Assumptions(), record)
    other = training_cost(CONFIG, "m", [_run(**training)], ARCH, Assumptions(), record)
    assert other.gpu_hours / packed.gpu_hours == pytest.approx((60 / 80) / share, rel=1e-12)
    # no count of the layout: checkpointing's second forward alone, as the planner assumed before
    unknown = training_cost(CONFIG, "m", [_run(**training)], ARCH, Assumptions(), tmp_path / "absent.json")
    assert f"{100 * (0.75 if _run(**training).training['gradient_checkpointing'] else 1):.0f} % of the FLOPs useful " \
           "(assumed: no FLOP count of this layout)" in unknown.note


def test_a_bf16_run_writes_its_snapshots_in_half_the_disk_of_an_fp32_run():
    bf16, fp32 = (training_cost(CONFIG, "m", [_run(precision=p)], ARCH, Assumptions()) for p in ("bf16", "fp32"))
    resumable = 2 * 12 * ARCH.params
    assert (fp32.disk_bytes - resumable) == 2 * (bf16.disk_bytes - resumable)


def test_paper_plan_has_every_job_family_and_states_its_cost_at_planning(tmp_path):
    plan = judge([ROOT / "config" / "paper.yaml"])
    config, runs, curves = plan.config, plan.runs, plan.curves()
    costs = plan_costs(config, runs, ROOT, catalog=plan.catalog, curves=curves)
    assert {c.family for c in costs} == {"sample_offline", "cache_reference", "train", "evaluate", "curve"}
    assert all(c.disk_bytes > 0 and c.gpu_hours > 0 for c in costs)
    total, hours = sum(c.disk_bytes for c in costs) / GB, sum(c.gpu_hours for c in costs)
    lines = cost_lines(config, runs, plan.catalog, tmp_path, curves=curves)
    assert lines[0] == (f"plan: ~{total:,.0f} GB of disk and ~{hours:,.0f} GPU-hours in {sum(c.jobs for c in costs)} "
                        f"GPU jobs (per job family, with the assumptions: fpa plan-memory CONFIG)")
    # config/paper.yaml pins none of its three hub models yet (fpa lock does); its catalog files are pinned
    assert lines[-1].endswith(": models.qwen3-4b-base, models.qwen2.5-math-7b, models.llama-3.2-3b-instruct "
                              "(fpa lock CONFIG pins them)")


def test_the_disk_is_warned_of_over_the_budget_and_over_the_free_space():
    assert disk_warnings(100, None, 1000) == [] and disk_warnings(100, 200, 1000) == []
    over_budget, over_free = disk_warnings(100, 50, 10)
    assert over_budget == ("disk: the config's jobs write ~100 GB > budget.disk_gb 50 "
                           "(per job family: fpa plan-memory CONFIG)")
    assert over_free.startswith("disk: the config's jobs write ~100 GB > the 10 GB free on the file system of results/")


def test_the_free_space_is_the_nearest_existing_directorys(tmp_path):
    assert free_gb(tmp_path / "results" / "not" / "yet") == free_gb(tmp_path) > 0


def test_the_rlvr_config_fits_its_gpus_with_trls_colocated_vllm_share():
    """The RLVR config's offline run trains under FSDP (DDP did not fit 80 GB), and its online runs are
    planned with the GPU share TRL's colocated vLLM engine takes."""
    from fpa.memory.plan import GIB, plan_memory
    from fpa.online.base import COLOCATED_VLLM_SHARE

    plan = judge([ROOT / "config" / "paper-rlvr.yaml"])
    gpu = int(plan.config["gpu_memory_gb"] * GIB)
    estimates = plan_memory(plan.config, plan.runs, gpu, ROOT)
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


def test_the_planner_takes_the_gpus_rate_from_the_measured_mfu_and_the_useful_share_and_names_them(tmp_path):
    """The measured MFU of the layout users_step ran, over that layout's useful share: the GPU's rate on the
    FLOPs it executes, which another layout's share then turns into hours."""
    flops = _flops_record(tmp_path / "flops.json")
    configured = {"attention": "masked", "gradient_checkpointing": True, "checkpoint_every_layers": 1}
    measured = {"status": "ok", "result": {"planner_train_mfu": 0.41,
                                           "variants": {"configured": {"training": configured}}}}
    full = Assumptions.calibrated(_gpu_record(tmp_path / "gpu.json", "full", measured), flops)
    assert full.train_hfu == pytest.approx(0.41 / (60 / 120), rel=1e-12)
    assert ("train_hfu_source: measured: gpu.json, users_step on NVIDIA H200 at abc1234: MFU 0.410 / useful share "
            "0.500 (flops.json: masked, checkpointing every 1 layer(s), at abc1234)") in "\n".join(full.lines())
    named_no_layout = {"status": "ok", "result": {"planner_train_mfu": 0.41}}
    assert Assumptions.calibrated(_gpu_record(tmp_path / "old.json", "full", named_no_layout), flops).train_hfu == 0.41
    given = Assumptions.calibrated(tmp_path / "gpu.json", flops, train_hfu=0.2)
    assert (given.train_hfu, given.train_hfu_source) == (0.2, "given (--train-hfu)")
    # a tiny CPU record, a record without the measurement, no record: the stated default
    for record in (_gpu_record(tmp_path / "tiny.json", "tiny", measured), _gpu_record(tmp_path / "none.json", "full", None),
                   tmp_path / "absent.json"):
        default = Assumptions.calibrated(record, flops)
        assert (default.train_hfu, default.train_hfu_source) == (Assumptions().train_hfu, Assumptions().train_hfu_source)
    cost = training_cost(CONFIG, "m", [_run()], ARCH, full, flops)
    assert cost.gpu_hours == pytest.approx(training_cost(CONFIG, "m", [_run()], ARCH, Assumptions(), flops).gpu_hours
                                           * 0.35 / full.train_hfu, rel=1e-12)


def test_planning_goes_on_where_an_estimate_cannot_be_made(monkeypatch, tmp_path):
    """A checkout without the GPU record the HF decoder's rate comes from (a copy of the workflow) still
    plans, saying why it states no cost (the rehearsal's planning crashed on it)."""
    import fpa.memory.cost as cost

    def no_record(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", "benchmarks/gpu/results/gpu.json")

    monkeypatch.setattr(cost, "hf_decode_rate", no_record)
    plan = judge([ROOT / "config" / "paper-rehearsal.yaml"])
    lines = cost_lines(plan.config, plan.runs, plan.catalog, tmp_path, curves=plan.curves())
    assert lines[0] == ("plan: disk and GPU-hours not estimated: [Errno 2] No such file or directory: "
                        "'benchmarks/gpu/results/gpu.json'")
    assert lines[1].startswith("plan: 3 hub inputs not pinned")
