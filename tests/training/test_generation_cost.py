"""Generation in the cost plan (``fpa.memory.generation_cost``): vLLM's engine start-ups, one per
job, the curves' snapshots, and the HF decoder priced at its rate measured on a GPU."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fpa.memory.cost import Assumptions, plan_costs, run_snapshots
from fpa.memory.plan import model_architecture
from fpa.planning import judge
from fpa.planning.figures import planned_curves

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def paper():
    plan = judge([ROOT / "config" / "paper.yaml"])
    return plan.config, plan.runs, plan.catalog


def by_family(costs, model: str) -> dict:
    return {cost.family: cost for cost in costs if cost.model == model}


def test_vllm_generation_counts_its_tokens_and_one_engine_start_per_job(paper):
    config, runs, catalog = paper
    model = "qwen3-4b-base"
    params = model_architecture(model, config["models"][model], ROOT).params
    curves = planned_curves(config, runs)
    costs = by_family(plan_costs(config, runs, ROOT, catalog=catalog, curves=curves), model)
    cold = by_family(plan_costs(config, runs, ROOT, Assumptions(engine_start_s=0.0), catalog=catalog, curves=curves), model)
    for family in ("sample_offline", "evaluate", "curve"):  # one vLLM engine per job (1 GPU each)
        assert costs[family].gpu_hours - cold[family].gpu_hours == pytest.approx(
            costs[family].jobs * 60.0 / 3600, rel=1e-9), family
        generated = costs[family].disk_bytes / 4  # 4 bytes of text a generated token
        assert cold[family].gpu_hours == pytest.approx(generated * 2 * params / (0.06 * 989e12) / 3600, rel=1e-9)
    assert costs["train"].gpu_hours == cold["train"].gpu_hours


def test_each_planned_curve_samples_every_snapshot_of_its_run(paper):
    config, runs, catalog = paper
    model = "qwen3-4b-base"
    curve = by_family(plan_costs(config, runs, ROOT, catalog=catalog, curves=planned_curves(config, runs)), model)["curve"]
    methods = [path.split("/")[3] for path in planned_curves(config, runs) if path.split("/")[2] == model]
    points = sum(1 if m == "base" else run_snapshots(config, runs[(model, m)], Assumptions()) for m in methods)
    train = 12_000 * (1 - config["dataset"]["validation_fraction"])
    offrl = runs[(model, "offrl")].training
    assert run_snapshots(config, runs[(model, "offrl")], Assumptions()) == (
        offrl["epochs"] * math.ceil(int(train) / offrl["batch_problems"]) // offrl["snapshot_every"])
    assert curve.jobs == len(methods) and points > 2 * len(methods)
    assert curve.note.startswith(f"{points} snapshots on math500, one engine per curve job")
    math500 = 500 * config["benchmarks"]["math500"]["n"]
    assert curve.disk_bytes == points * math500 * 2048 * 0.5 * 4


def test_hf_generation_is_priced_at_the_decoders_measured_rate(paper):
    config, runs, catalog = paper
    record = json.loads((ROOT / "benchmarks" / "gpu" / "results" / "gpu.json").read_text())
    measured = record["measurements"]["generation"]["result"]
    hf = {**config, "generation": {**config["generation"], "backend": "hf", "batch_size": 200}}
    costs = plan_costs(hf, runs, ROOT, catalog=catalog, curves=planned_curves(hf, runs))
    recorded = model_architecture("qwen3-4b-base", config["models"]["qwen3-4b-base"], ROOT).params
    rate = measured["batch_sizes"]["256"]["tokens_per_s"]  # 200 rows: the nearest recorded count
    for model in ("qwen3-4b-base", "qwen2.5-math-7b"):
        params = model_architecture(model, config["models"][model], ROOT).params
        for family in ("sample_offline", "evaluate", "curve"):
            cost = by_family(costs, model)[family]
            expected = cost.disk_bytes / 4 / (rate * recorded / params) / 3600  # no engine start: HF loads in seconds
            assert cost.gpu_hours == pytest.approx(expected, rel=1e-9), (model, family)
            assert f"HF decoder at {rate:,.0f} tokens/s (qwen3-4b-base, 256 rows, {record['gpu']}" in cost.note


def test_a_generation_record_without_a_measurement_is_refused(tmp_path):
    from fpa.memory.generation_cost import hf_decode_rate

    (tmp_path / "gpu.json").write_text(json.dumps({"gpu": "x", "measurements": {"generation": {"status": "failed"}}}))
    with pytest.raises(ValueError, match=r"gpu.json: measurements.generation: expected a measurement with status "
                                         r"ok, got 'failed'"):
        hf_decode_rate(64, {}, tmp_path / "gpu.json")
