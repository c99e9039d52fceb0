"""A provenance record: the standard fields of every record, then what the job itself recorded."""

from __future__ import annotations

from fpa.io import read_json, write_text
from fpa.provenance.record import RECORD_FIELDS, Job


def test_a_record_has_the_standard_fields_and_the_jobs_own(tmp_path):
    write_text(tmp_path / "in.txt", "input")
    job = Job("rule", {"key": 1}, {"source": tmp_path / "in.txt"}, "code")
    with job.output(tmp_path / "plain.txt") as tmp:
        write_text(tmp, "out")
    with job.output(tmp_path / "selected.txt", selected={"step": 3}) as tmp:
        write_text(tmp, "out")
    assert set(read_json(tmp_path / "plain.txt.prov.json")) == RECORD_FIELDS
    assert set(read_json(tmp_path / "selected.txt.prov.json")) - RECORD_FIELDS == {"selected"}


def test_a_record_says_what_the_job_cost(tmp_path):
    write_text(tmp_path / "in.txt", "input")
    job = Job("rule", {}, {"source": tmp_path / "in.txt"})
    sum(i * i for i in range(2_000_000))  # some CPU work between the job's start and its output
    with job.output(tmp_path / "out.txt") as tmp:
        write_text(tmp, "out")
    usage = read_json(tmp_path / "out.txt.prov.json")["usage"]
    assert usage["wall_s"] > 0 and usage["cpu_s"] > 0
    assert usage["gpu_s"] == usage["wall_s"] * usage["gpus"] == 0  # CI has no GPU
