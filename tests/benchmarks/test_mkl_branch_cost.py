"""benchmarks/numerics/mkl_branch_cost.py: the paired SFT runs read back from their logs and weights."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from numerics import mkl_branch_cost  # noqa: E402


def _runs(directory: Path, cpu: dict[str, str]) -> Path:
    for (branch, times), loop_cpu_s in zip(cpu.items(), (100.0, 190.0)):
        name = branch.replace(",", "-")
        (directory / name).mkdir(parents=True)
        (directory / name / "model.safetensors").write_bytes(name.encode())
        (directory / name / "metrics.json").write_text(f'{{"config": {{"steps": 100}}, "cpu_seconds": {loop_cpu_s}}}')
        (directory / f"{name}.log").write_text(f"training...\nWALL 500.0 CPU {times} MAXRSS 1 KB\n")
    return directory


def test_the_cost_is_the_ratio_of_the_sft_loops_cpu_seconds(tmp_path):
    record = mkl_branch_cost.read_pair(_runs(tmp_path, {"AVX2,STRICT": "200.0+10.0", "COMPATIBLE": "300.0+15.0"}))
    assert record["runs"]["COMPATIBLE"]["cpu_s"] == 190.0 and record["runs"]["AVX2,STRICT"]["process_cpu_s"] == 210.0
    assert "| `COMPATIBLE` | 100 | 190.0 | 1.90 | 315.0 | 500 |" in mkl_branch_cost.markdown(record)


def test_a_log_without_its_time_is_named(tmp_path):
    _runs(tmp_path, {"AVX2,STRICT": "200.0+10.0", "COMPATIBLE": "300.0+15.0"})
    (tmp_path / "COMPATIBLE.log").write_text("killed\n")
    with pytest.raises(SystemExit, match=r"COMPATIBLE.log: expected /usr/bin/time's line"):
        mkl_branch_cost.read_pair(tmp_path)
