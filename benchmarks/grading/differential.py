"""Our code graders against the benchmarks' own harnesses, on a generated corpus, before and after.

    nice python benchmarks/grading/differential.py --against 7ba9ff5   # writes results/differential.json
    python benchmarks/grading/differential.py --against 7ba9ff5 --problems 2 --bigcodebench 1   # smoke run

The corpus (``corpus.py``): per family, the mirror's problems, their gold solutions, a mutant per
mutation operator and the forged programs of docs/code_eval.md. Each program is graded by the official
harness (``official.py``, in a subprocess of its own) and by our grader of this checkout and of the
commit ``--against``, each in a fresh process on its own ``src`` (the earlier commit's files come from
``git archive``), as ``fpa`` grades it (``ours.py``). A disagreement is a defect unless ``KEPT`` names its
class as a documented difference (docs/code_eval.md, "Kept differences"). The sandbox mode is the
record's: ``none`` where bubblewrap cannot run (the programs are this script's own).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
import grading.corpus as corpus  # noqa: E402
import grading.official as official  # noqa: E402
from shared.checkouts import USER_ENVIRONMENT, commit_of, cores_text, export, machine  # noqa: E402

from fpa.grading.code import sandbox_mode  # noqa: E402
from fpa.io import write_json  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "results" / "differential.json"
BCB_SKIP = ("BigCodeBench/0", "BigCodeBench/9", "BigCodeBench/17")  # minutes on 2 cores; seaborn; 18 s
# (family, class) -> why ours differs from the official harness there, on purpose (docs/code_eval.md)
KEPT = {
    ("lcb_stdin", "stdout_buffer"): "LCB captures stdout in a StringIO (no .buffer): a real stdout here",
    ("code_tests", "stdout_buffer"): "LCB captures stdout in a StringIO (no .buffer): a real stdout here",
    **{(family, "files_victim"): "the harness shares its directory: one program's file changes another's verdict"
       for family in corpus.FAMILIES},
    **{(family, "forged"): "the official harness compares in the program's process: the forgery passes there"
       for family in corpus.FAMILIES},
}
def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--against", required=True, help="the earlier commit (ours before)")
    add("--problems", type=int, default=16, help="problems per family (default 16)")
    add("--bigcodebench", type=int, default=3, help="BigCodeBench tasks from the tiny file (default 3)")
    add("--mode", default=sandbox_mode(), help="sandbox mode of our graders")
    add("--families", nargs="*", choices=corpus.FAMILIES, help="only these families (default: all)")
    add("--combine", nargs="*", type=Path, help="write the record of these partial records (--families runs) and exit")
    add("--out", type=Path, default=OUT)
    return parser.parse_args(argv)


def build(args) -> tuple[dict[str, list[dict]], dict[str, Path]]:
    """The corpus by family, each case with the program the official harness runs; the task files."""
    from fpa.grading.code import load_tasks, mirror_task_file

    files = {bench: mirror_task_file(bench) for bench in ("mbppplus", "humanevalplus")}
    files["bigcodebench"] = mirror_task_file("bigcodebench").parent.parent / "tiny" / "bigcodebench" / \
        mirror_task_file("bigcodebench").name
    mbpp, humaneval = load_tasks("mbppplus", files["mbppplus"]), load_tasks("humanevalplus", files["humanevalplus"])
    probes = {**corpus.probe(mbpp, corpus.LCB_TESTS), **corpus.probe(humaneval, 1)}
    n = args.problems
    lcb = corpus.lcb_problems(mbpp, probes, 3 * n)
    bcb = {key: task for key, task in load_tasks("bigcodebench", files["bigcodebench"]).items() if key not in BCB_SKIP}
    families = {"lcb_stdin": corpus.lcb_stdin_cases(lcb[:n]), "lcb_functional": corpus.lcb_functional_cases(lcb[n:2 * n]),
                "code_tests": corpus.code_tests_cases(lcb[2 * n:]),
                "mbppplus": corpus.evalplus_cases("mbppplus", chosen(mbpp, probes, n), probes),
                "humanevalplus": corpus.evalplus_cases("humanevalplus", chosen(humaneval, probes, n), probes),
                "bigcodebench": corpus.bigcodebench_cases(dict(list(bcb.items())[: args.bigcodebench]))}
    return {family: prepare(cases, bcb) for family, cases in families.items()}, files


def prepare(cases: list[dict], bigcodebench: dict[str, dict] | None = None) -> list[dict]:
    """``cases`` of one family, each given its class, the program the official harness runs (its extraction, and
    for BigCodeBench its calibration and the task's test) and whether it is its problem's last (the official
    driver then tidies the directory); ``bigcodebench``: the tasks of a BigCodeBench family's cases."""
    for index, case in enumerate(cases):
        case["class"] = "forged" if case["operator"].startswith("forged_") else case["operator"]
        case["last_of_problem"] = index + 1 == len(cases) or cases[index + 1]["problem"] != case["problem"]
        if case["family"] == "bigcodebench":
            task = bigcodebench[case["problem"]]
            case.update(test=task["test"], entry_point=task["entry_point"],
                        official=task["code_prompt"] + "\n    pass\n" + official.extracted(case["completion"]))
        elif "official" not in case:
            case["official"] = official.extracted(case["completion"])
    return cases


def disagreeing(cases: list[dict], theirs: list[bool], ours: list) -> list[tuple[dict, bool, tuple]]:
    """``(case, the official verdict, ours)`` of each case where ours and the official harness differ."""
    return [(case, verdict, tuple(mine)) for case, verdict, mine in zip(cases, theirs, ours)
            if bool(mine[0]) != verdict]


def chosen(tasks: dict[str, dict], probes: dict[str, dict], count: int) -> dict[str, dict]:
    """The first tasks, and up to 3 each of those returning a float and a dict (their operators need them)."""
    keep = list(tasks)[: max(0, count - 6)]
    for kind in ("float", "dict"):
        keep += [key for key in tasks if probes.get(key, {}).get("type") == kind and key not in keep][:3]
    return {key: tasks[key] for key in keep}


def ours(src: Path, family: str, cases: list[dict], mode: str, data: Path | None) -> list:
    """``ours.py`` in a fresh process on the package under ``src``."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(cases, handle)
    try:
        argv = [sys.executable, str(Path(__file__).with_name("ours.py")), handle.name, mode, family]
        argv += [str(data)] if data else []
        done = subprocess.run(argv, env={**USER_ENVIRONMENT, "PYTHONPATH": str(src)}, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"ours ({src}) on {family} failed: {done.stderr[-3000:]}")
        return [tuple(verdict) for verdict in json.loads(done.stdout.strip().splitlines()[-1])]
    finally:
        os.unlink(handle.name)


def run(args) -> dict:
    families, files = build(args)
    record = {"benchmark": "differential", "commit": commit_of(ROOT), "against": commit_of(ROOT, args.against),
              "cpu": machine(), "sandbox_mode": args.mode, "load_average": [round(os.getloadavg()[0], 2)], "cases": []}
    with tempfile.TemporaryDirectory(prefix="differential-") as workdir:
        export(ROOT, args.against, Path(workdir))
        for family, cases in families.items():
            if args.families and family not in args.families:
                continue
            data = files.get(family)
            theirs = official.verdicts(family, cases, data)
            now = ours(ROOT / "src", family, cases, args.mode, data)
            before = ours(Path(workdir) / "src", family, cases, args.mode, data)
            record["cases"] += [{"family": family, "problem": case["problem"], "operator": case["operator"],
                                 "class": case["class"], "official": verdict, "ours": list(after), "before": list(earlier)}
                                for case, verdict, after, earlier in zip(cases, theirs, now, before)]
            mismatched = Counter((case["class"], verdict, after)
                                 for case, verdict, after in disagreeing(cases, theirs, now))
            print(f"{family}: {len(cases)} programs, ours ≠ official: {sum(mismatched.values())} "
                  f"(before: {len(disagreeing(cases, theirs, before))}) {dict(mismatched)}", flush=True)
            record["load_average"].append(round(os.getloadavg()[0], 2))
            write_json(args.out, record)  # as it goes: a family's verdicts are kept if a later one fails
    return record


def disagreements(record: dict, side: str) -> Counter:
    return Counter((case["family"], case["class"]) for case in record["cases"] if bool(case[side][0]) != case["official"])


def markdown(record: dict) -> str:
    """Per family: programs, agreements and disagreements (documented or not), before and after."""
    old = record["against"][:7]
    commits = record.get("commits") or {family: record["commit"] for family in corpus.FAMILIES}
    now = "; ".join(f"`{commit[:7]}` ({', '.join(f for f in corpus.FAMILIES if commits.get(f) == commit)})"
                    for commit in dict.fromkeys(commits.values()))
    after, before = disagreements(record, "ours"), disagreements(record, "before")
    count = Counter(case["family"] for case in record["cases"])
    lines = [f"{len(record['cases']):,} generated programs, each graded by the benchmark's official harness and by "
             f"ours at `{old}` (before) and at {now} (after); sandbox mode `{record['sandbox_mode']}`; "
             f"{cores_text(record)}, shared, 1-min load average {record['load_average'][0]:.1f} → "
             f"{record['load_average'][-1]:.1f}.", "",
             "| family | programs | agree before | agree after | disagree after: kept (documented) | disagree after: defects |",
             "|---|---:|---:|---:|---:|---:|"]
    for family in corpus.FAMILIES:
        kept = sum(n for (f, c), n in after.items() if f == family and (f, c) in KEPT)
        defects = sum(n for (f, c), n in after.items() if f == family and (f, c) not in KEPT)
        lines.append(f"| {family} | {count[family]} | {count[family] - sum(n for (f, _), n in before.items() if f == family)} "
                     f"| {count[family] - kept - defects} | {kept} | {defects} |")
    lines += ["", "Every class with a disagreement before or after (programs in the class; ours ≠ official):", "",
              "| family | class | programs | official passes | ours passes before | ours passes after | ≠ before | ≠ after "
              "| kept because |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    sizes = Counter((case["family"], case["class"]) for case in record["cases"])
    passes = {side: Counter((case["family"], case["class"]) for case in record["cases"] if case[side] is True
                            or (side != "official" and case[side][0])) for side in ("official", "before", "ours")}
    for key in sorted(set(after) | set(before), key=lambda key: (corpus.FAMILIES.index(key[0]), key[1])):
        lines.append(f"| {key[0]} | `{key[1]}` | {sizes[key]} | {passes['official'][key]} | {passes['before'][key]} | "
                     f"{passes['ours'][key]} | {before[key]} | {after[key]} | "
                     f"{KEPT.get(key, '**defect**' if after[key] else '')} |")
    return "\n".join(lines) + "\n"


def combine(paths: list[Path]) -> dict:
    """One record of partial ones (families run apart, e.g. in parallel), the load averages of each in turn;
    a family graded again in a later part (after a fix) replaces its earlier verdicts."""
    parts = [json.loads(path.read_text()) for path in paths]
    record = {**parts[0], "cases": [], "load_average": [], "commits": {}}
    for part in parts:
        if (part["against"], part["sandbox_mode"]) != (record["against"], record["sandbox_mode"]):
            raise ValueError(f"--combine: {paths}: expected the same commit --against and sandbox mode in every part")
        again = {case["family"] for case in part["cases"]}
        record["cases"] = [case for case in record["cases"] if case["family"] not in again] + part["cases"]
        record["load_average"] += part["load_average"]
        record["commits"].update({family: part["commit"] for family in again})
    record["commit"] = parts[-1]["commit"]
    return record


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.combine:
        combined = combine(arguments.combine)
        write_json(arguments.out, combined)
        print(markdown(combined))
    else:
        print(markdown(run(arguments)))
