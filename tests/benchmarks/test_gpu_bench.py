"""benchmarks/gpu/run.py, the script a lent GPU runs, in its tiny mode: the same code on CPU with tiny
shapes, so that it cannot rot between GPUs. Checks what the run must show (exact resume, equal
checkpointed gradients, the cache alike on both devices, the head near float64), not its speed.

Every measurement but ``dag``: its DAG is the rehearsal's (config/paper-rehearsal.yaml for one
model), which tests/workflow/test_rehearsal.py runs already; there the rows of the rehearsal's
jobs are read by the script's code and the GPU's plan of the DAG is dry-run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu" / "run.py"
sys.path.insert(0, str(ROOT / "benchmarks"))
from gpu.budget import Measurement, run_all  # noqa: E402
from gpu.tables import markdown  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore")
# every measurement of the script but the DAG (the rehearsal's: see the module's docstring)
TINY_RUN = ("overhead", "users_step", "deterministic", "head", "trl", "fsdp_resume", "checkpointing", "cache",
            "generation", "overhead_large")


def _run(*args):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def tiny_record(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu")
    done = _run("--tiny", "--rounds", "1", "--out", str(out), "--only", ",".join(TINY_RUN))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "gpu.json").read_text()), done.stdout


@pytest.mark.slow
@pytest.mark.xdist_group("gpu_tiny_record")  # one worker runs the tiny record
def test_tiny_run_measures_all_but_the_dag_and_shows_what_it_must(tiny_record):
    record, stdout = tiny_record
    assert stdout.startswith("plan (tiny, CPU")
    runs = record["measurements"]
    assert {k: e["status"] for k, e in runs.items()} == {**dict.fromkeys(TINY_RUN, "ok"), "overhead_large": "skipped"}
    users = runs["users_step"]["result"]
    assert set(users["variants"]) == {"configured", "causal"}  # tiny: the compiled variant left out
    assert users["timed_step"] == 0  # every round on step 0's batch, met by each side in its warm-up
    assert users["variants"]["configured"]["padding_share"] == 0  # packed (training.attention's default)
    assert users["variants"]["causal"]["padding_share"] > 0  # MATH's mix, padded
    for variant in users["variants"].values():
        assert variant["training"]["parallel"] == "fsdp"
        assert set(variant["methods"]) == {"fpa", "offrl"} and variant["ratio_time_fpa_over_offrl"]["n"] == 1
        assert all(m["mfu"]["median"] > 0 and m["tokens_per_s"]["median"] > 0 for m in variant["methods"].values())
        assert variant["fpa_reference_reads_waited"] == 1  # the warm-up's first read; each timed step's, read ahead
    assert users["variants"]["causal"]["training"]["attention"] == "causal"
    assert users["planner_train_mfu"] == users["variants"]["configured"]["methods"]["offrl"]["mfu"]["median"]
    assert users["paper"]["offrl"]["paper_examples_per_s_per_gpu"] == 16.6 / 2  # config/paper_results.yaml
    deterministic = runs["deterministic"]["result"]
    assert deterministic["resume"]["bit_identical"] and deterministic["variants"]["deterministic"]["training"][
        "deterministic"]
    overhead = runs["overhead"]["result"]
    assert set(overhead["methods"]) == {"fpa", "offrl"} and overhead["ratio_time_fpa_over_offrl"]["n"] == 1
    assert runs["fsdp_resume"]["result"]["bit_identical"] and runs["fsdp_resume"]["result"]["resumed_from_step"] == 1
    assert runs["fsdp_resume"]["result"]["backend"] == "gloo"
    assert runs["checkpointing"]["result"]["bit_identical"]
    cache = runs["cache"]["result"]  # CPU against CPU here: every stored quantity equal
    assert cache["targets_equal"] and all(d["max_abs"] == 0 for d in cache["max_diff"].values())
    head = runs["head"]["result"]["precisions"]
    assert head["fp32"]["max_abs_diff_logp"] < 1e-4 < head["bf16"]["max_abs_diff_logp"]
    assert runs["trl"]["result"]["cases"]["dpo"]["check"] == "same token ids and first-step loss"
    assert "does not fit this GPU" in runs["overhead_large"]["reason"]  # the real 7B, on an H200
    assert "| Off-RL w/ FPA |" in markdown(record) and "Tiny CPU run" in markdown(record)
    assert "| configured | offrl |" in markdown(record) and "resume under it" in markdown(record)
    assert "paired rounds, each on step 0's batch, which each side met in its warm-up" in markdown(record)


def test_plan_only_prints_every_measurement_with_its_estimate():
    done = _run("--plan-only")
    assert done.returncode == 0, done.stderr[-2000:]
    for key in (*TINY_RUN, "dag"):
        assert f" {key} " in done.stdout
    assert "plan (full shapes; budget 450 s" in done.stdout


def test_the_readmes_one_call_set_fits_one_calls_budget():
    """The set of measurements benchmarks/gpu/README.md has one call run: their estimates within the
    script's default budget, so none of them is skipped for want of time by the plan."""
    import re

    import torch

    from gpu.run import H200_BYTES, measurements, parse_args

    readme = (ROOT / "benchmarks" / "gpu" / "README.md").read_text()
    (one_call,) = re.findall(r"One call holds\s+`--only ([a-z_,]+)`", readme)
    estimates = {m.key: m.estimate_s for m in measurements(False, torch.device("cpu"), H200_BYTES)}
    assert set(one_call.split(",")) <= set(estimates)
    assert sum(estimates[key] for key in one_call.split(",")) <= parse_args(["--plan-only"]).budget_s


def test_a_failure_is_recorded_and_an_overrun_skipped(tmp_path):
    def boom(ctx):
        raise MemoryError("CUDA out of memory (planted)")

    items = [Measurement("first", "fails", 1, 1, boom), Measurement("second", "runs", 1, 1, lambda ctx: {"x": 1}),
             Measurement("third", "too long", 100, 100, lambda ctx: {"never": True})]
    record = run_all(items, {}, {"benchmark": "gpu"}, tmp_path / "gpu.json", budget_s=10, tiny=True)
    runs = json.loads((tmp_path / "gpu.json").read_text())["measurements"]
    assert runs == record["measurements"]
    assert runs["first"]["status"] == "failed" and "planted" in runs["first"]["error"]
    assert runs["second"] == {**runs["second"], "status": "ok", "result": {"x": 1}}
    assert runs["third"]["status"] == "skipped" and "budget" in runs["third"]["reason"]


@pytest.mark.slow
@pytest.mark.xdist_group("gpu_tiny_record")
def test_report_renders_the_record_and_sets_the_paper_beside_a_full_run(tiny_record, tmp_path, monkeypatch):
    from gpu.models import paper_overhead
    from shared import report

    record, _ = tiny_record
    path = tmp_path / "gpu" / "results" / "gpu.json"  # laid out as benchmarks/gpu/results/gpu.json
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    monkeypatch.setattr(report, "results_file", lambda name, where: path)
    assert report.render("gpu", "test") == markdown(record)
    paper = paper_overhead()
    full = markdown({**record, "mode": "full", "gpu": "a GPU"})
    fpa_row = next(line for line in full.splitlines() if line.startswith("| Off-RL w/ FPA |"))
    assert f"| {paper['fpa'][0]} |" in fpa_row and f"| {paper['fpa'][1]} |" in fpa_row
    assert f"(paper, from its examples/s: {paper['offrl'][0] / paper['fpa'][0]:.3f})" in full


def test_what_the_planner_rules_out_is_skipped_before_it_runs(tmp_path):
    """The H100's call 5 ran the paper's overhead step into out-of-memory: the planner's peak with its margin
    against the GPU's memory now skips it with a line, in the plan and in the record, and runs nothing."""
    import torch

    from gpu.budget import plan_lines
    from gpu.run import H200_BYTES, measurements

    h100 = 85017493504  # torch's total_memory of the H100 80GB in results/gpu_h100.json
    planned = {m.key: m.unfit for m in measurements(False, torch.device("cpu"), h100)}
    assert "77.4 GiB + 2.2 GiB margin > 79.2 GiB" in planned["overhead"] and planned["overhead_large"]
    assert planned["head"] is None
    assert {m.key: m.unfit for m in measurements(False, torch.device("cpu"), H200_BYTES)}["overhead"] is None

    def never(ctx):
        raise AssertionError("a measurement the planner rules out ran")

    items = [Measurement("big", "too big", 1, 1, never, unfit="does not fit this GPU: planted"),
             Measurement("small", "runs", 1, 1, lambda ctx: {"x": 1})]
    assert any(line.endswith("big            skip: does not fit this GPU: planted") for line in
               plan_lines(items, tiny=True, budget_s=10))
    runs = run_all(items, {}, {"benchmark": "gpu"}, tmp_path / "gpu.json", budget_s=10, tiny=True)["measurements"]
    assert runs["big"]["status"] == "skipped" and runs["big"]["reason"] == "does not fit this GPU: planted"
    assert runs["small"]["status"] == "ok"


def test_accelerate_state_is_reset_between_sides():
    """Our trainer's Accelerator runs without mixed precision and TRL's with bf16 on a GPU: accelerate
    refuses the second in one process unless its state is reset, as the first H200 run found."""
    from accelerate import Accelerator

    from gpu.budget import free_device_memory

    Accelerator(cpu=True, mixed_precision="no")
    free_device_memory()
    assert Accelerator(cpu=True, mixed_precision="bf16").mixed_precision == "bf16"
    free_device_memory()


def test_a_later_call_replaces_only_what_failed_and_names_its_commit():
    from gpu.budget import merge_calls

    first = {"commit": "a", "started": "t1", "order": ["x", "y"],
             "measurements": {"x": {"status": "ok", "result": 1}, "y": {"status": "failed", "error": "e"}}}
    later = {"commit": "b", "started": "t2",
             "measurements": {"y": {"status": "ok", "result": 2}, "x": {"status": "skipped", "reason": "r"}}}
    merged = merge_calls(first, later)
    assert merged["measurements"]["x"] == {"status": "ok", "result": 1}
    assert merged["measurements"]["y"] == {"status": "ok", "result": 2, "commit": "b", "started": "t2"}
    assert first["measurements"]["y"]["status"] == "failed"


def test_model_flops_are_the_stated_formula():
    """6 N_body T + 6 V d C + 6 L H Q sum s^2, worked out by hand for a small architecture."""
    from fpa.memory.architecture import Architecture
    from gpu.models import Shape
    from gpu.throughput import model_flops

    arch = Architecture(vocab_size=10, hidden_size=4, intermediate_size=8, num_hidden_layers=2, num_attention_heads=2,
                        num_key_value_heads=1, head_dim=2, tie_word_embeddings=True, qk_norm=True)
    # a layer: q 4x4, k and v 4x2 each, o 4x4, MLP 3 x 4x8 = 16+8+8+16+96 = 144, norms 2x4 + 2x2 = 12
    body = 2 * (144 + 12) + 4  # + the final norm
    flops = model_flops(Shape("s", "qwen3", arch, 2, 8, 2, {}), [3, 5], completion_tokens=4)
    assert flops == 6 * body * 8 + 6 * 10 * 4 * 4 + 6 * 2 * 4 * (9 + 25)
