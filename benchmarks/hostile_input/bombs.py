"""Peak memory of refusing a compression bomb, on every path that reads a compressed data file.

    python benchmarks/hostile_input/bombs.py                 # writes benchmarks/hostile_input/results/bombs.json
    python benchmarks/hostile_input/bombs.py --work /tmp/b   # where the bombs and outputs go (default: a temp dir)
    python benchmarks/hostile_input/bombs.py --baseline-src /tmp/before/src   # also the 1 GiB bomb on older code

Two bombs: a 1 MB ``.jsonl.gz`` holding one 1 GiB line and a 12 MB one holding one 12 GiB
line, and a 12 MB one of 12 GiB of records of 4 KiB each (every line within the bounds on one
record, so only the bound on the file, or the record count, stops it). Each is given to
``fpa validate-benchmark`` (a ``source: file`` benchmark), ``fpa prepare-benchmark`` (as the
catalog's gsm8k file), and ``fpa fetch-data`` both from a mirror (the file's sha256 pinned,
its content checked) and downloaded (a ``jsonl.gz`` upstream stored plain: decompressed as it
streams). Each command runs under ``/usr/bin/time -v``; its peak RSS, wall time, exit status
and last stderr line are recorded, next to the same command on the tiny mirror's real file.
``--baseline-src`` also runs ``validate-benchmark`` and ``prepare-benchmark`` on the 1 GiB bomb
with the package of another checkout (the code before the bounds), under a 6 GiB address-space
limit so that it cannot take the machine.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MiB, GiB = 1 << 20, 1 << 30
BLOCK = MiB  # one gzip member per MiB of content: ~1 KB each at level 9


def write_gzip_bomb(path: str | os.PathLike, size: int, head: bytes, unit: bytes = b"a") -> int:
    """A ``.gz`` decompressing to ``head`` then ``size`` bytes of ``unit`` repeated (``unit`` must
    divide ``BLOCK``): gzip members of one block each, concatenated. Returns the file's size."""
    assert BLOCK % len(unit) == 0, unit
    member = gzip.compress(unit * (BLOCK // len(unit)), 9, mtime=0)
    with open(path, "wb") as out:
        out.write(gzip.compress(head, 9, mtime=0))
        for _ in range(size // BLOCK):
            out.write(member)
    return Path(path).stat().st_size


def record(size: int) -> bytes:
    """One JSONL record of exactly ``size`` bytes (newline included), both a gsm8k row and a
    ``source: file`` benchmark's record."""
    frame = b'{"id": "bomb", "problem": "p", "question": "", "answer": "#### 1"}\n'
    return frame.replace(b'""', b'"' + b"q" * (size - len(frame)) + b'"', 1)


def bombs(work: Path) -> dict[str, Path]:
    made = {}
    for name, size, unit in (("1gib_line", GiB, b"a"), ("12gib_line", 12 * GiB, b"a"),
                             ("12gib_records", 12 * GiB, record(4096))):
        path = work / f"{name}.jsonl.gz"
        head = b"" if name.endswith("records") else b'{"id": "bomb", "question": "'
        write_gzip_bomb(path, size, head, unit)
        made[name] = path
    return made


def commands(bomb: Path, work: Path) -> dict[str, list[str]]:
    """The fpa commands that read ``bomb`` (a ``.jsonl.gz``), by the path they take: the CI
    catalog's gsm8k (20 records) for the mirror, and the full catalog's hh_rlhf (a ``jsonl.gz``
    upstream stored plain) for the download, with the sample's 20 records."""
    sys.path.insert(0, str(ROOT / "src"))
    from fpa.data.download import read_benchmarks_config

    fpa = [sys.executable, "-m", "fpa"]
    catalog = ROOT / ".test" / "config_math" / "benchmarks.yaml"
    gsm8k = read_benchmarks_config(catalog)["benchmarks"]["gsm8k"]
    mirror_entry = {**gsm8k, "path": bomb.name, "sha256": hashlib.sha256(bomb.read_bytes()).hexdigest()}
    download_entry = {**read_benchmarks_config(ROOT / "config" / "benchmarks.yaml")["preference"]["hh_rlhf"],
                      "url": bomb.as_uri(), "records": 20}
    return {
        "validate-benchmark": [*fpa, "validate-benchmark", str(bomb), "--name", "mine", "--config-json", "{}",
                               "--out", str(work / "validated.jsonl")],
        "prepare-benchmark": [*fpa, "prepare-benchmark", str(bomb), "--name", "GSM8K", "--catalog", str(catalog),
                              "--config-json", '{"parts": ["gsm8k"]}', "--out", str(work / "prepared.jsonl")],
        "fetch-data (mirror)": [*fpa, "fetch-data", "--entry-json", json.dumps(mirror_entry), "--mirror",
                                str(bomb.parent), "--out", str(work / "fetched.jsonl.gz")],
        "fetch-data (download)": [*fpa, "fetch-data", "--entry-json", json.dumps(download_entry),
                                  "--out", str(work / "downloaded.jsonl")],
    }


def measure(argv: list[str], src: Path = ROOT / "src", prefix: tuple[str, ...] = ()) -> dict:
    """Run ``argv`` (the package from ``src``) under ``/usr/bin/time -v``: exit status, peak RSS,
    wall, the last error line."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(["/usr/bin/time", "-v", *prefix, *argv], capture_output=True, text=True, env=env,
                          timeout=600)
    stats = dict(re.findall(r"^\s*(.+?): (.+)$", done.stderr, re.MULTILINE))
    wall = [float(part) for part in stats["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":")]
    own = [line for line in done.stderr.splitlines() if line.startswith(("fpa ", "MemoryError", "Traceback"))
           and not line.startswith("fpa usage:")]
    return {"exit": done.returncode, "peak_rss_mib": round(int(stats["Maximum resident set size (kbytes)"]) / 1024, 1),
            "wall_s": round(wall[-1] + 60 * wall[-2], 2), "message": own[-1] if own else ""}


def _cpu() -> str:
    with open("/proc/cpuinfo") as handle:
        model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    return f"{model or platform.machine()} ({os.cpu_count()} cores)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=None, help="directory for the bombs and outputs (default: a temp dir)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "bombs.json"))
    parser.add_argument("--baseline-src", default=None, help="the src/ of a checkout before the bounds")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="fpa-bombs-"))
    work.mkdir(parents=True, exist_ok=True)
    tiny = Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data")) / "tiny"
    # the same commands on a good file: the tiny gsm8k sample, gzipped, with a `source: file` benchmark's fields
    real = work / "real.jsonl.gz"
    rows = [json.loads(line) for line in (tiny / "gsm8k" / "test.jsonl").read_text().splitlines()]
    rows = [{"id": f"gsm8k/{i}", "problem": row["question"], **row} for i, row in enumerate(rows)]
    real.write_bytes(gzip.compress("".join(json.dumps(row) + "\n" for row in rows).encode(), mtime=0))
    results = {"cpu": _cpu(), "load_before": os.getloadavg(), "work": str(work), "files": {}}
    for name, bomb in {"real_gsm8k_sample": real, **bombs(work)}.items():
        runs = {what: measure(argv) for what, argv in commands(bomb, work).items()}
        results["files"][name] = {"compressed_bytes": bomb.stat().st_size, "runs": runs}
        for what, run in runs.items():
            print(f"{name:18s} {what:22s} exit {run['exit']} peak {run['peak_rss_mib']:7.1f} MiB "
                  f"{run['wall_s']:6.2f} s  {run['message'][:150]}")
        if args.baseline_src and name == "1gib_line":
            before = {what: measure(argv, Path(args.baseline_src), ("prlimit", f"--as={6 * GiB}"))
                      for what, argv in commands(bomb, work).items() if what.endswith("-benchmark")}
            results["files"][name]["before"] = before
            for what, run in before.items():
                print(f"{name:18s} {what + ' (before)':22s} exit {run['exit']} peak {run['peak_rss_mib']:7.1f} MiB "
                      f"{run['wall_s']:6.2f} s  {run['message'][:150]}")
        if bomb != real:
            bomb.unlink()
    results["load_after"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


def markdown(record: dict) -> str:
    """The results as a table: each file and command, how it ended, peak RSS, wall time."""
    rows = ["| file (compressed) | command | exit | peak RSS | wall | message |", "|---|---|---|---|---|---|"]
    for name, file in record["files"].items():
        runs = {**file["runs"], **{f"{what}, code before the bounds": run for what, run in file.get("before", {}).items()}}
        for what, run in runs.items():
            message = run["message"].split(": error: ", 1)[-1].replace(record["work"], "$WORK")
            size = file["compressed_bytes"]
            size = f"{size / 1e6:.1f} MB" if size >= 1e6 else f"{size / 1e3:.0f} kB"
            rows.append(f"| {name} ({size}) | `{what}` | {run['exit']} | "
                        f"{run['peak_rss_mib']:.0f} MiB | {run['wall_s']:.1f} s | {message or 'ok'} |")
    load = f"load average {record['load_before'][0]:.1f} before, {record['load_after'][0]:.1f} after"
    return "\n".join(rows) + f"\n\n{record['cpu']}, {load}.\n"



def markdown_headline(record: dict) -> str:
    """The index's line: the largest peak RSS of refusing a bomb, and of the code before the bounds."""
    bombs = [file for name, file in record["files"].items() if name.startswith(("1gib", "12gib"))]
    bounded = max(run["peak_rss_mib"] for file in bombs for run in file["runs"].values())
    before = [run["peak_rss_mib"] for file in bombs for run in file.get("before", {}).values()]
    return (f"every bomb refused within {bounded:.0f} MiB peak RSS"
            + (f" (the code before the bounds: {max(before):.0f} MiB)" if before else ""))

if __name__ == "__main__":
    main()
