"""benchmarks/default_run/default_run.py --import: a record kept by hand becomes a record of the benchmark's format,
its prose kept, and a README without the expected lines is refused by name."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from default_run import default_run  # noqa: E402

TABLE = "| Method | toy8 |\n|---|:---:|\n| Base | 85.62 ± 0.92 |\n"
COST = "| model | method | seed | stage | jobs | wall_s | cpu_s | max_rss_mb |\n|---|---|---|---|---:|---:|---:|---:|\n" \
       "| toy | (shared) |  | base model | 1 | 176.4 | 261.2 | 752 |\n"


def _kept_by_hand(directory: Path, commit: str) -> Path:
    directory.mkdir()
    (directory / "README.md").write_text(
        f"A fresh clone of commit `{commit[:7]}`, on 2 vCPUs of an AMD EPYC.\n"
        "- install 55 s; `snakemake --cores all` 424 s wall (7 min 04 s), 173 % CPU, max RSS 810 MB; exit 0\n"
        "- every run trained 82 steps (fewer mixed problems)\n- `lscpu` model name: AMD EPYC\n")
    (directory / "toy.md").write_text(TABLE)
    (directory / "cost_by_stage.md").write_text(COST)
    return directory


def test_a_record_kept_by_hand_is_converted(tmp_path):
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    record = default_run.import_record(_kept_by_hand(tmp_path / "amd", head))
    [round_] = record["rounds"]
    assert (record["cpu"], record["cpus"], record["commit"]) == ("AMD EPYC", 2, head)
    assert (round_["wall_s"], round_["cpu_s"], round_["max_rss_mb"]) == (424.0, 733.5, 810)
    assert round_["training"] == {"steps": [82]} and round_["table"] == TABLE
    assert "173 % CPU" in record["provenance"]["readme"]
    text = default_run.markdown(record)
    assert "| 1 | 7 min 4 s | 734 | 261 | 810 | not recorded | yes |" in text and "Every run trained 82 steps." in text


def test_a_readme_without_the_times_is_refused(tmp_path):
    directory = _kept_by_hand(tmp_path / "amd", "05181aa")
    (directory / "README.md").write_text("A fresh clone of commit `05181aa`.\n")
    with pytest.raises(SystemExit, match=r"README.md: expected the lines stating \['times', 'steps', 'cpu', 'cpus'\]"):
        default_run.import_record(directory)
