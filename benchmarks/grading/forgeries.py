"""The verdict of each known forged program, graded by this checkout and by an earlier commit.

    python benchmarks/grading/forgeries.py --against d0e18d6   # writes benchmarks/grading/results/forgeries.json

The programs are ``tests/grading_code/forgeries.py``'s, on the tasks named there (the LCB
fixture, a TACO fixture row, MBPP+ and HumanEval+ tiny-file tasks, a BigCodeBench-format
task), graded as the pipeline grades them: ``grade_code_many`` with each benchmark's own
sandbox (``make_sandbox``; LiveCodeBench's and ``code_tests``' limits), one fresh process per
checkout whose ``PYTHONPATH`` is that checkout's ``src`` (the earlier commit's files from
``git archive``). ``tests/grading_code/test_forgeries.py`` asserts the verdicts of this one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/
from shared.checkouts import USER_ENVIRONMENT, commit_of, export  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CATALOG = ROOT / "tests" / "grading_code"
sys.path.insert(0, str(CATALOG))
from forgeries import CHEATS, DESCRIPTIONS, RESIDUAL  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "forgeries.json"
LABELS = {"livecodebench": "LiveCodeBench functional", "code_tests": "code_tests (TACO/APPS) functional",
          "mbppplus": "MBPP+", "humanevalplus": "HumanEval+", "bigcodebench": "BigCodeBench"}  # fmt: skip
WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from code_helpers import TINY
from forgeries import BCB_TASK, CHEATS, TASKS, program
from fpa.data.code import build_code_train
from fpa.grading.code import default_mirror, grade_code_many, load_tasks
from fpa.grading.code.tests import grade_tests_many
fixtures = __import__("pathlib").Path(sys.argv[1]).parent / "fixtures"
def pairs(bench):
    return [(program(bench, cheat), TASKS[bench][0]) for cheat in CHEATS[bench]]
verdicts = {"livecodebench": grade_code_many("livecodebench", pairs("livecodebench"),
                                             data_path=fixtures / "lcb" / "test6_fixture.jsonl")}
problems = {p.id: p for p in build_code_train({"taco_train": fixtures / "code" / "mirror" / "taco" / "train.jsonl"})[0]}
verdicts["code_tests"] = grade_tests_many([(code, problems[task_id].answer) for code, task_id in pairs("code_tests")])
for bench in ("mbppplus", "humanevalplus"):
    task_id = TASKS[bench][0]
    tasks = {task_id: load_tasks(bench, default_mirror() / TINY[bench])[task_id]}
    verdicts[bench] = grade_code_many(bench, pairs(bench), tasks=tasks)
verdicts["bigcodebench"] = grade_code_many("bigcodebench", pairs("bigcodebench"), tasks={BCB_TASK["task_id"]: BCB_TASK})
print(json.dumps({bench: dict(zip(CHEATS[bench], map(list, found))) for bench, found in verdicts.items()}))
"""


def grade(src: Path) -> dict:
    env = {**USER_ENVIRONMENT, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", WORKER, str(CATALOG)], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(against: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="forgeries-") as workdir:
        export(ROOT, against, Path(workdir))
        found = {"commit": grade(ROOT / "src"), "against": grade(Path(workdir) / "src")}
    return {"benchmark": "forgeries", "commit": commit_of(ROOT), "against": commit_of(ROOT, against),
            "verdicts": {bench: {cheat: {side: found[side][bench][cheat] for side in found} for cheat in cheats}
                         for bench, cheats in CHEATS.items()},
            "residual": sorted(f"{bench}/{cheat}" for bench, cheat in RESIDUAL)}  # fmt: skip


def markdown(record: dict) -> str:
    """One row per forged program, one column per benchmark: the verdict before → after."""
    old, new = record["against"][:7], record["commit"][:7]
    benches = list(record["verdicts"])
    cheats = list(dict.fromkeys(cheat for bench in benches for cheat in record["verdicts"][bench]))
    lines = [f"Verdict of each forged program with the graders of `{old}` → `{new}` (**pass** = forged; "
             "— = not applicable to that harness).", "",
             "| forged program | " + " | ".join(LABELS[bench] for bench in benches) + " |",
             "|---|" + "---|" * len(benches)]
    for cheat in cheats:
        cells = [_cell(record["verdicts"][bench].get(cheat), f"{bench}/{cheat}" in record["residual"])
                 for bench in benches]
        lines.append(f"| `{cheat}`: {DESCRIPTIONS[cheat]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(verdict: dict | None, residual: bool) -> str:
    if verdict is None:
        return "—"
    before, after = (("**pass**" if ok else rule) for ok, rule in (verdict["against"], verdict["commit"]))
    return f"{before} → {after}" + (" (still forgeable)" if residual else "")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", required=True, help="the earlier commit")
    parser.add_argument("--out", type=Path, default=OUT)
    arguments = parser.parse_args()
    result = run(arguments.against)
    from fpa.io import write_json

    write_json(arguments.out, result)
    print(markdown(result))
