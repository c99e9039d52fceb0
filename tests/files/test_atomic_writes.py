"""Atomic writers: a re-run cleans what a killed writer left and leaves a running one's temporary
alone; records do not outlive their outputs; a finished output named like a temporary or a record
is never taken for one; outputs follow the umask."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch
from safetensors.torch import save_file

from fpa.io import _HOST, atomic_path, temps_of, write_json, write_text
from fpa.provenance.record import Job, remove_leftovers, sidecar_of

WRITER = textwrap.dedent("""
    import sys, time
    from fpa.io import atomic_path
    with atomic_path(sys.argv[1], directory=True) as tmp:
        (tmp / "part").write_text("half")
        print("writing", flush=True)
        time.sleep(120)
""")


@pytest.fixture
def writer(tmp_path):
    """A process in the middle of writing ``tmp_path / "out"`` (a directory output)."""
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path / "out")], stdout=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert process.stdout.readline() == "writing\n"
    yield process
    process.kill()
    process.wait()


def _write_out(tmp_path) -> None:
    with atomic_path(tmp_path / "out", directory=True) as tmp:
        (tmp / "part").write_text("whole")


def test_a_rerun_removes_what_a_killed_writer_left(tmp_path, writer):
    [left] = temps_of(tmp_path, "out")
    writer.kill()  # kill -9: no cleanup runs in the writer
    writer.wait()
    assert left.is_dir()
    _write_out(tmp_path)
    assert not left.exists() and temps_of(tmp_path) == []
    assert (tmp_path / "out" / "part").read_text() == "whole"


def test_a_running_writers_temporary_is_left_alone(tmp_path, writer):
    [running] = temps_of(tmp_path, "out")
    _write_out(tmp_path)
    assert (running / "out" / "part").read_text() == "half" and temps_of(tmp_path) == [running]
    assert remove_leftovers(tmp_path) == [] and running.is_dir()


def test_a_temporary_of_another_host_or_output_is_left_alone(tmp_path):
    other_host = tmp_path / ".out.999999999-otherhost.abcd1234.tmp"
    other_output = tmp_path / ".out2.999999999-otherhost.abcd1234.tmp"
    other_host.mkdir()
    other_output.write_text("")
    _write_out(tmp_path)
    assert other_host.is_dir() and other_output.is_file()


def test_a_record_does_not_outlive_its_output(tmp_path, writer):
    job = Job("rule", {}, {})
    for name in ("kept.txt", "deleted.txt"):
        with job.output(tmp_path / name) as tmp:
            write_text(tmp, name)
    (tmp_path / "deleted.txt").unlink()  # Snakemake deletes a failed job's outputs, not their sidecars
    write_json(sidecar_of(tmp_path / "out"), {"output": {"path": str(tmp_path / "out")}})  # of an output being written
    assert remove_leftovers(tmp_path, tmp_path / "absent") == [sidecar_of(tmp_path / "deleted.txt")]
    assert sidecar_of(tmp_path / "kept.txt").exists() and sidecar_of(tmp_path / "out").exists()
    [left] = temps_of(tmp_path, "out")
    writer.kill()
    writer.wait()
    assert remove_leftovers(tmp_path) == [left, sidecar_of(tmp_path / "out")]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kept.txt", "kept.txt.prov.json"]


def test_a_finished_output_named_like_a_temporary_or_a_record_is_kept(tmp_path):
    """A catalog's file may be named anything, and a benchmark ``x.json.prov`` is evaluated into
    ``x.json.prov.json``: the clean-up goes by what the project wrote into its temporaries and
    records, not by names, so it removes neither (nor a directory named like a record)."""
    job = Job("rule", {}, {})
    like_a_temporary = {tmp_path / f".data.{2 ** 40}-{_HOST}.abcd1234.tmp": False,  # no such pid on this host
                        tmp_path / f".model.{2 ** 40}-{_HOST}.abcd1234.tmp": True}
    for path, directory in like_a_temporary.items():
        with job.output(path, directory=directory) as tmp:
            write_text(tmp / "weights" if directory else tmp, "finished")
    with job.output(tmp_path / "x.json.prov.json") as tmp:  # and no x.json beside it
        write_json(tmp, {"pass_at_1": 0.5})
    (tmp_path / "m.prov.json").mkdir()  # a directory output named like a record
    with job.output(tmp_path / "gone.json") as tmp:
        write_text(tmp, "{}")
    (tmp_path / "gone.json").unlink()
    assert remove_leftovers(tmp_path) == [sidecar_of(tmp_path / "gone.json")]
    for path in [*like_a_temporary, tmp_path / "x.json.prov.json"]:
        assert path.exists() and sidecar_of(path).exists(), path
    assert (tmp_path / "m.prov.json").is_dir() and temps_of(tmp_path) == []


def test_outputs_follow_the_umask(tmp_path):
    umask = os.umask(0)
    os.umask(umask)
    with atomic_path(tmp_path / "model", directory=True) as tmp:
        save_file({"weight": torch.zeros(2)}, str(tmp / "model.safetensors"))  # safetensors writes it 0600
        (tmp / "run.sh").write_text("")
        (tmp / "run.sh").chmod(0o700)
    write_text(tmp_path / "table.csv", "")
    modes = {path.name: path.stat().st_mode & 0o777 for path in tmp_path.rglob("*")}
    assert modes == {"model": 0o777 & ~umask, "model.safetensors": 0o666 & ~umask, "run.sh": 0o777 & ~umask,
                     "table.csv": 0o666 & ~umask}
