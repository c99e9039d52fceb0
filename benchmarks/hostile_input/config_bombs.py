"""How fast hostile configs are refused (issue 34): a 1 KB alias bomb, a 10^5-level nest and keys that
are not strings (``1:``, ``true:``, ``null:`` under models, methods, benchmarks and tables), each
put in the default config. For each: the judge's own time to refuse it (in process), and the wall
time and output of ``fpa check-config``, of ``snakemake -n`` with the bomb as ``config/config.yaml``
and of ``snakemake -n --configfile bomb``, beside the wall time of each command on the good config.

    python benchmarks/hostile_input/config_bombs.py      # writes benchmarks/hostile_input/results/config_bombs.json
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
from fpa.errors import ConfigError  # noqa: E402
from fpa.io import write_json  # noqa: E402
from fpa.planning import judge  # noqa: E402
from fpa.provenance.cpu import cpu_facts  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "config_bombs.json"
GOOD = (ROOT / "config" / "config.yaml").read_text()
SECTIONS = ("models", "methods", "benchmarks", "tables")


def alias_bomb() -> str:
    """9^9 values in about 500 bytes, used as the seeds."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return GOOD.replace("seeds: [42, 43, 44]", "\n".join(lines) + "\nseeds: *a9")


def deep_nest(levels: int = 100_000) -> str:
    return GOOD.replace("seeds: [42, 43, 44]", "seeds: " + "[" * levels + "]" * levels)


def non_string_key(section: str, key: str) -> str:
    """``key:`` as one more entry of ``section`` (a copy of its first entry, in flow style)."""
    start = GOOD.index(f"\n{section}:\n") + len(f"\n{section}:\n")
    return GOOD[:start] + f"  {key}: {{}}\n" + GOOD[start:]


def bombs() -> dict[str, str]:
    cases = {"alias_bomb": alias_bomb(), "deep_nest_100000": deep_nest()}
    cases.update({f"key_{key}_in_{section}": non_string_key(section, key)
                  for section in SECTIONS for key in ("1", "true", "null")})
    return cases


def timed(command: list[str], cwd: Path) -> dict:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    lines = (result.stdout + result.stderr).strip().splitlines()
    return {"seconds": round(time.perf_counter() - started, 2), "exit": result.returncode, "lines": len(lines),
            "last_line": lines[-1][:300] if lines else "", "traceback": "Traceback" in result.stderr}


def measure(name: str, text: str, directory: Path) -> dict:
    path = directory / f"{name}.yaml"
    path.write_text(text)
    (directory / "config").mkdir(exist_ok=True)
    (directory / "config" / "config.yaml").write_text(text)
    started = time.perf_counter()
    try:
        judge([path])
        refusal = None
    except ConfigError as error:
        refusal = str(error)
    judge_seconds = time.perf_counter() - started
    snakemake = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(ROOT / "Snakefile")]
    return {"bytes": len(text.encode()), "judge_seconds": round(judge_seconds, 4), "refusal": refusal,
            "check_config": timed([sys.executable, "-m", "fpa", "check-config", str(path)], directory),
            "snakemake_n_default_config": timed(snakemake + ["-d", str(directory)], directory),
            "snakemake_n_configfile": timed(snakemake + ["-d", str(directory / "w"), "--configfile", str(path)],
                                            directory)}


def markdown(record: dict) -> str:
    """Per case: the judge's own time to refuse, and each command's wall time and lines of output."""
    lines = [f"{record['cpu']}, Python {record['python']}; wall times include each command's start (the "
             "good config's row: the same commands planning a config they accept).", "",
             "| case | judge ms | `fpa check-config` s (lines) | `snakemake -n`, as config/config.yaml, s (lines) | "
             "`snakemake -n --configfile` s (lines) |", "|---|---:|---|---|---|"]
    for name, case in record["cases"].items():
        runs = [case[key] for key in ("check_config", "snakemake_n_default_config", "snakemake_n_configfile")]
        lines.append(f"| {name} | {case['judge_seconds'] * 1000:.1f} | "
                     + " | ".join(f"{run['seconds']:.2f} ({run['lines']})" for run in runs) + " |")
    return "\n".join(lines)


def main() -> None:
    record = {"cpu": cpu_facts()["model"], "python": platform.python_version(), "cases": {}}
    with tempfile.TemporaryDirectory() as directory:
        for name, text in {"good_config": GOOD, **bombs()}.items():
            record["cases"][name] = measure(name, text, Path(directory))
            print(name, record["cases"][name], flush=True)
    write_json(OUT, record)


if __name__ == "__main__":
    main()
