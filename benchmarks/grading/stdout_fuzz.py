"""LiveCodeBench's stdout comparison fuzzed: ours (``fpa.grading.code.stdout_match``) against LiveCodeBench's own.

    python benchmarks/grading/stdout_fuzz.py --examples 400        # per class; writes results/stdout_fuzz.json
    python benchmarks/grading/stdout_fuzz.py --baseline d0e18d6   # also the rule of that commit (git archive)

The pairs and the oracle are the tests' (``tests/grading/stdout_pairs.py``: ``CLASSES``, and
``lcb_matches``, nvidia-livecodebench's ``grade_stdio``); ``tests/grading/test_stdout_match.py`` runs the
same property with a fixed budget. Here: up to ``--examples`` pairs per class, and with ``--baseline`` the
verdicts of the ``stdout_matches`` in that commit's ``livecodebench.py`` (before ``stdout_match``: a float
comparison) beside ours.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))  # benchmarks/: shared/
sys.path.insert(0, str(ROOT / "tests" / "grading"))  # the tests' pairs and oracle
from shared.checkouts import commit_of, export  # noqa: E402
from stdout_pairs import CLASSES, lcb_matches  # noqa: E402

from fpa.grading.code.stdout_match import stdout_matches  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "stdout_fuzz.json"


# --- the benchmark ---------------------------------------------------------------------------------------
def baseline_matches(rev: str) -> Callable[[str, str], bool]:
    """``stdout_matches`` of ``livecodebench.py`` at the git revision ``rev`` (before ``stdout_match``)."""
    with tempfile.TemporaryDirectory() as directory:
        export(ROOT, rev, Path(directory))
        path = Path(directory) / "src" / "fpa" / "grading" / "code" / "livecodebench.py"
        spec = importlib.util.spec_from_file_location("baseline_livecodebench", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module.stdout_matches


def fuzz(examples: int, seed: int, baseline: str | None = None) -> dict:
    """Per class: the pairs checked, LiveCodeBench's passes, and the pairs where ours (and the baseline)
    disagree with it, with a few of them."""
    before = baseline_matches(baseline) if baseline else None
    rows = {}
    for name, pairs in CLASSES.items():
        counts, found = collections.Counter(), collections.defaultdict(list)

        @hypothesis_seed(seed)
        @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(pairs)
        def run(pair):
            printed, expected = pair
            verdict = lcb_matches(printed, expected)
            counts["pairs"] += 1
            counts["lcb_passes"] += verdict
            for who, judge in (("ours", stdout_matches), ("baseline", before)):
                if judge is not None and judge(printed, expected) != verdict:
                    counts[f"{who}_disagrees"] += 1
                    found[who] = sorted(found[who] + [(printed, expected, verdict)], key=_size)[:3]  # the shortest

        run()
        rows[name] = {"pairs": counts["pairs"], "lcb_passes": counts["lcb_passes"],
                      "ours_disagrees": counts["ours_disagrees"], "ours_examples": _examples(found["ours"]),
                      **({"baseline_disagrees": counts["baseline_disagrees"],
                          "baseline_examples": _examples(found["baseline"])} if before else {})}
    from importlib.metadata import version

    from fpa.provenance.record import project_version

    return {"benchmark": "stdout_fuzz", "code": project_version(), "examples_per_class": examples, "seed": seed,
            "nvidia_livecodebench": version("nvidia-livecodebench"),
            "baseline": commit_of(ROOT, baseline) if baseline else None,
            "classes": rows}


def _size(example: tuple[str, str, bool]) -> int:
    return len(example[0]) + len(example[1])


def _examples(found: list[tuple[str, str, bool]]) -> list[dict]:
    return [{"printed": printed, "expected": expected, "lcb": verdict} for printed, expected, verdict in found]


def markdown(record: dict) -> str:
    """Per class: pairs checked, LiveCodeBench's verdicts, and disagreements with it."""
    with_baseline = record["baseline"] is not None
    before = f"`{record['baseline'][:7]}` (floats)" if with_baseline else ""
    head = "| class | pairs | LCB passes | LCB fails | ours ≠ LCB |" + (f" {before} ≠ LCB |" if with_baseline else "")
    lines = [f"Up to {record['examples_per_class']} generated pairs per class (hypothesis seed {record['seed']}), "
             f"each judged by nvidia-livecodebench {record['nvidia_livecodebench']}'s `grade_stdio` and by ours at "
             f"`{record['code']['commit'][:7]}`:", "", head,
             "|---|---:|---:|---:|---:|" + ("---:|" if with_baseline else "")]
    for name, row in record["classes"].items():
        cells = [name, row["pairs"], row["lcb_passes"], row["pairs"] - row["lcb_passes"], row["ours_disagrees"]]
        lines.append("| " + " | ".join(map(str, cells + ([row["baseline_disagrees"]] if with_baseline else []))) + " |")
    total = {key: sum(row.get(key, 0) for row in record["classes"].values())
             for key in ("pairs", "lcb_passes", "ours_disagrees", "baseline_disagrees")}
    cells = ["**all**", total["pairs"], total["lcb_passes"], total["pairs"] - total["lcb_passes"],
             total["ours_disagrees"]] + ([total["baseline_disagrees"]] if with_baseline else [])
    lines.append("| " + " | ".join(map(str, cells)) + " |")
    if with_baseline:
        lines += ["", f"A pair per class that {before} judged otherwise than LiveCodeBench (printed → expected: "
                  "LiveCodeBench's verdict):"]
        lines += [f"- {name}: `{example['printed']!r}` → `{example['expected']!r}`: "
                  f"{'pass' if example['lcb'] else 'fail'}"
                  for name, row in record["classes"].items() for example in row.get("baseline_examples", [])[:1]]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: ours against LiveCodeBench's own verdicts over every class."""
    rows = record["classes"].values()
    return (f"LiveCodeBench's stdout verdicts, ours ≠ LiveCodeBench's own: {sum(row['ours_disagrees'] for row in rows)} "
            f"of {sum(row['pairs'] for row in rows)} generated pairs\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=400, help="generated pairs per class (at most)")
    parser.add_argument("--seed", type=int, default=52)
    parser.add_argument("--baseline", help="a git revision (git archive): its stdout_matches is judged too")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from fpa.io import write_json

    record = fuzz(args.examples, args.seed, args.baseline)
    write_json(args.out, record)
    print(markdown(record))


if __name__ == "__main__":
    main()
