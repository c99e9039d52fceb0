"""The Step-DPO dataset job is its model's data stage in the cost table, like sample_offline + build_dataset."""

from __future__ import annotations

from fpa.aggregation.cost import SHARED, cost_by_stage, read_job_cost, select_costs

HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def test_step_dpo_dataset_is_shared_data_generation(tmp_path):
    path = tmp_path / "logs" / "benchmarks" / "step_dpo_dataset" / "qwen3-4b-base.tsv"
    path.parent.mkdir(parents=True)
    path.write_text(HEADER + "12.5\t0:00:12\t300\t1\t1\t1\t0\t0\t50\t11.0\n")
    selected = select_costs([read_job_cost(path)], models=["qwen3-4b-base"], methods=["base", "fpa"], seeds=[42])
    assert [cost.rule for cost in selected] == ["step_dpo_dataset"]
    table = cost_by_stage(selected).set_index(["method", "stage"])
    assert table.loc[(SHARED, "data generation"), "wall_s"] == 12.5
