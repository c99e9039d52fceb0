"""Code grading throughput of this checkout against an earlier commit, paired per round.

    nice python benchmarks/grading/code_rounds.py --against d0e18d6   # writes benchmarks/grading/results/code_rounds.json
    python benchmarks/grading/code_rounds.py --against d0e18d6 --tasks 40 --rounds 2   # smoke run
    nice python benchmarks/grading/code_rounds.py --against 7ba9ff5 --bench livecodebench --tasks 12 --rounds 4
        # LiveCodeBench: writes results/code_rounds_lcb.json

With ``--bench livecodebench`` the corpus is the differential corpus's (``corpus.py``): the first MBPP+
tasks it turns into LCB problems, each as a stdin and a functional problem of one LCB task file, with the
samples ``LCB_OPERATORS`` of each, graded by ``grade_code_many("livecodebench", ...)``.

The corpus: MBPP+ tasks from the mirror (Mbpp/599 left out: its canonical solution sums ranges of up to
10^8 numbers, one serial run of about 300 s), each with 8 fixed samples (4 right, 4 wrong: ``SAMPLES``), and a ninth,
``plus_wrong_value``: right on the base inputs and ``None`` on the plus ones (``plus_wrong``
returns an object, which the sandbox knows fails; a plain wrong value only the host can
tell, so that sample is stopped by the host at its first plus input, where EvalPlus's
``fast_check`` stopped in-process). Graded in the sandbox by ``grade_code_many("mbppplus", ...,
workers=2)`` as ``fpa evaluate-code`` calls it. The
tasks are split into ``--rounds`` blocks; each round grades its block with both
checkouts, each in a fresh process whose ``PYTHONPATH`` is that checkout's ``src`` (the
earlier commit's files come from ``git archive``), back to back, the order alternating by
round. Per round: each side's wall time, the grader process's CPU time (user + sys of it
and of its reaped children: the host side, parsing and comparing; the sandboxed runs are
not reaped by it and not counted), and the ratio this / earlier. The verdicts of
the two sides are compared pair by pair; a task whose per-input time limits are close to
its run time (Mbpp/255) can flip with the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.checkouts import USER_ENVIRONMENT, commit_of, cores_text, export, machine  # noqa: E402
from shared.rounds import rotated, spread, spread_text  # noqa: E402

from fpa.io import write_json  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "results" / "code_rounds.json"
TARGET = 1.10  # this checkout's time / the earlier one's (issue 52)
# Wrong on every top-level call after the first ``n_base`` (one count per process, so it passes
# the base split and fails the plus split); nested recursive calls are not counted.
PLUS_WRONG = '''
_fpa_impl, _fpa_depth, _fpa_calls = {entry}, [0], [0]

def {entry}(*args, **kwargs):
    _fpa_depth[0] += 1
    try:
        out = _fpa_impl(*args, **kwargs)
    finally:
        _fpa_depth[0] -= 1
    if _fpa_depth[0] == 0:
        _fpa_calls[0] += 1
        if _fpa_calls[0] > {n_base}:
            return object()
    return out
'''
PLUS_WRONG_VALUE = PLUS_WRONG.replace("object()", "None")
SAMPLES = {
    "gold": (True, lambda t: t["prompt"] + t["canonical_solution"]),
    "fenced": (True, lambda t: f"Here is my solution.\n```python\n{t['canonical_solution'].strip()}\n```\nDone."),
    "imports": (True, lambda t: "import math\nimport re\nfrom typing import List\n" + t["canonical_solution"]),
    "main_guard": (True, lambda t: t["canonical_solution"]
                   + f"\n\nif __name__ == '__main__':\n    print({t['entry_point']})\n"),
    "none": (False, lambda t: f"def {t['entry_point']}(*args, **kwargs):\n    return None\n"),
    "raises": (False, lambda t: f"def {t['entry_point']}(*args, **kwargs):\n    raise NotImplementedError\n"),
    "syntax": (False, lambda t: t["canonical_solution"] + f"\ndef {t['entry_point']}(:\n"),
    "plus_wrong": (False, lambda t: t["canonical_solution"]
                   + PLUS_WRONG.format(entry=t["entry_point"], n_base=len(t["base_input"]))),
}  # fmt: skip
LCB_OPERATORS = ("gold", "off_by_one", "wrong_type", "header_names", "import_stdlib", "extra_output", "fence_python3",
                 "exit_1_after_print", "extra_line")  # LiveCodeBench samples: the differential corpus's (corpus.py)
WORKER = """
import json, resource, sys, time
from fpa.grading.code import grade_code_many, load_tasks
data, pairs, bench = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[4]
tasks = load_tasks(bench, data)
start = time.perf_counter()
verdicts = grade_code_many(bench, [tuple(pair) for pair in pairs], tasks=tasks, workers=int(sys.argv[3]))
wall = time.perf_counter() - start
usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
print(json.dumps({"wall_s": wall, "cpu_s": sum(u.ru_utime + u.ru_stime for u in usage), "verdicts": verdicts}))
"""


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--against", required=True, help="the earlier commit")
    add("--rounds", type=int, default=6, help="rounds: blocks of tasks, each graded by both checkouts")
    add("--tasks", type=int, default=None, help="first N MBPP+ tasks (default: all but --exclude)")
    add("--exclude", nargs="*", default=["Mbpp/599"], help="task ids left out (default: Mbpp/599)")
    add("--workers", type=int, default=2, help="grader threads (default 2, as evaluate-code on 2 cores)")
    add("--bench", choices=("mbppplus", "livecodebench"), default="mbppplus",
        help="mbppplus (default), or livecodebench: MBPP+ tasks as LCB stdin and functional problems (corpus.py)")
    add("--out", type=Path, default=None, help="default: results/code_rounds.json (code_rounds_lcb.json for LCB)")
    args = parser.parse_args(argv)
    args.out = args.out or OUT.with_name("code_rounds.json" if args.bench == "mbppplus" else "code_rounds_lcb.json")
    if args.rounds < 1:
        parser.error(f"--rounds: expected >= 1, got {args.rounds}")
    return args


def make_pairs(tasks: dict[str, dict], n_samples: int) -> tuple[list[tuple[str, str]], list[str]]:
    """``(completion, task_id)`` pairs, task by task, and the sample name of each pair."""
    names = list(SAMPLES)[:n_samples]
    pairs, kinds = [], []
    for task_id, task in tasks.items():
        for name in names:
            pairs.append((SAMPLES[name][1](task), task_id))
            kinds.append(name)
    return pairs, kinds


def split_blocks(tasks: dict[str, dict], n_blocks: int) -> list[dict[str, dict]]:
    """Contiguous blocks of tasks, as equal in count as possible."""
    items = list(tasks.items())
    n_blocks = max(1, min(n_blocks, len(items)))
    bounds = [round(i * len(items) / n_blocks) for i in range(n_blocks + 1)]
    return [dict(items[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]


def corpus(block: dict[str, dict]) -> tuple[list, list[str]]:
    """The 8 samples of each task, and ``plus_wrong_value``."""
    pairs, kinds = make_pairs(block, 8)
    for task_id, task in block.items():
        code = task["canonical_solution"] + PLUS_WRONG_VALUE.format(entry=task["entry_point"],
                                                                    n_base=len(task["base_input"]))
        pairs.append((code, task_id))
        kinds.append("plus_wrong_value")
    return pairs, kinds


def lcb_tasks(directory: Path, count: int) -> tuple[Path, dict[str, list[tuple[str, str]]]]:
    """The first ``count`` MBPP+ tasks that the differential corpus turns into LCB problems, each as a stdin and
    a functional problem of an LCB task file written in ``directory``, and the samples of each problem."""
    from grading import corpus

    from fpa.grading.code import load_tasks, mirror_task_file

    mbpp = load_tasks("mbppplus", mirror_task_file("mbppplus"))
    problems = corpus.lcb_problems(mbpp, corpus.probe(mbpp, corpus.LCB_TESTS), count)
    cases = corpus.lcb_stdin_cases(problems) + corpus.lcb_functional_cases(problems)
    records, samples = {}, {}
    for case in cases:
        if case["operator"] not in LCB_OPERATORS or " " in case["problem"]:
            continue
        key = f"{case['problem']}/{case['family']}"
        records[key] = {"question_id": key, "public_test_cases": json.dumps(case["tests"]), "private_test_cases": "[]",
                        "metadata": json.dumps({"func_name": case["func_name"]})}
        samples.setdefault(key, []).append((case["operator"], case["completion"]))
    path = directory / "lcb.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records.values()))
    return path, samples


def grade(src: Path, data: Path, pairs_file: Path, workers: int, bench: str = "mbppplus") -> dict:
    """One side of a round, in a fresh process on ``src``'s grader."""
    env = {**USER_ENVIRONMENT, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-c", WORKER, str(data), str(pairs_file), str(workers), bench]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args) -> dict:
    from fpa.grading.code import load_tasks, mirror_task_file, sandbox_mode

    mode = sandbox_mode()  # before any work: an FPA_SANDBOX the package refuses is refused here
    with tempfile.TemporaryDirectory(prefix="code-rounds-") as workdir:
        if args.bench == "mbppplus":
            data = mirror_task_file("mbppplus")
            kept = [(task_id, task) for task_id, task in load_tasks("mbppplus", data).items() if task_id not in args.exclude]
            tasks, samples_of = dict(kept[: args.tasks]), corpus
        else:
            data, tasks = lcb_tasks(Path(workdir), args.tasks or 16)
            samples_of = lcb_samples
        sides = {"commit": (commit_of(ROOT), ROOT / "src")}
        record = {"benchmark": "code_rounds", "bench": args.bench, "tasks": len(tasks), "excluded": args.exclude, "workers": args.workers,
                  "sandbox_mode": mode, "cpu": machine(), "load_average": [round(os.getloadavg()[0], 2)], "rounds": []}
        export(ROOT, args.against, Path(workdir))
        sides["against"] = (commit_of(ROOT, args.against), Path(workdir) / "src")
        record.update({side: commit for side, (commit, _) in sides.items()})
        for index, block in enumerate(split_blocks(tasks, args.rounds)):
            pairs, kinds = samples_of(block)
            pairs_file = Path(workdir) / f"pairs{index}.json"
            pairs_file.write_text(json.dumps(pairs))
            order = rotated(["commit", "against"], index)
            done = {side: grade(sides[side][1], data, pairs_file, args.workers, args.bench) for side in order}
            differ = [{"task_id": pair[1], "sample": kind, "commit": new[1], "against": old[1]}
                      for pair, kind, new, old in zip(pairs, kinds, done["commit"]["verdicts"], done["against"]["verdicts"])
                      if new[0] != old[0]]  # fmt: skip
            record["rounds"].append({"tasks": len(block), "samples": len(pairs), "first": order[0], "differ": differ,
                                     **{side: {k: round(v, 2) for k, v in result.items() if k != "verdicts"}
                                        for side, result in done.items()}})  # fmt: skip
            record["load_average"].append(round(os.getloadavg()[0], 2))
            ratio = done["commit"]["wall_s"] / done["against"]["wall_s"]
            print(f"round {index + 1}: {len(block)} tasks, wall commit {done['commit']['wall_s']:.1f} s, against "
                  f"{done['against']['wall_s']:.1f} s, ratio {ratio:.3f}; verdicts differing {len(differ)}", flush=True)
    return record


def lcb_samples(block: dict[str, list[tuple[str, str]]]) -> tuple[list, list[str]]:
    """The LiveCodeBench samples of each problem of ``block`` (``lcb_tasks``)."""
    pairs = [(completion, key) for key, samples in block.items() for _, completion in samples]
    return pairs, [operator for samples in block.values() for operator, _ in samples]


def ratios(record: dict, unit: str) -> str:
    """This / earlier of ``unit`` per round, as median [min–max]."""
    return spread_text(spread(entry["commit"][unit] / entry["against"][unit] for entry in record["rounds"]))


def markdown(record: dict) -> str:
    """Per round: both sides' wall and CPU seconds and the ratios; the median ratio and its range."""
    new, old = record["commit"][:7], record["against"][:7]
    samples = sum(entry["samples"] for entry in record["rounds"])
    corpus_text = (f"MBPP+ {record['tasks']} tasks (left out: {', '.join(record['excluded']) or 'none'}) x 9 samples"
                   if record.get("bench", "mbppplus") == "mbppplus" else
                   f"LiveCodeBench: {record['tasks']} problems (MBPP+ tasks as stdin and functional problems, "
                   f"differential corpus samples {', '.join(LCB_OPERATORS)})")
    lines = [f"{corpus_text} = {samples:,} samples in {len(record['rounds'])} rounds of one block each, {record['workers']} workers, "
             f"each side in a fresh process, order alternating; sandbox mode `{record.get('sandbox_mode', 'bwrap')}`; "
             f"{cores_text(record, record.get('cpus'))}, shared, 1-min load average "
             f"{record['load_average'][0]:.1f} → {record['load_average'][-1]:.1f}.", "",
             f"| round | tasks | `{new}` wall s | `{old}` wall s | wall ratio | `{new}` grader CPU s | `{old}` grader CPU s "
             "| grader CPU ratio | verdicts differing |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for index, entry in enumerate(record["rounds"], 1):
        lines.append(f"| {index} | {entry['tasks']} | {entry['commit']['wall_s']:.1f} | {entry['against']['wall_s']:.1f} | "
                     f"{entry['commit']['wall_s'] / entry['against']['wall_s']:.3f} | {entry['commit']['cpu_s']:.1f} | "
                     f"{entry['against']['cpu_s']:.1f} | {entry['commit']['cpu_s'] / entry['against']['cpu_s']:.3f} | "
                     f"{len(entry['differ'])} |")
    total = sum(e["commit"]["wall_s"] for e in record["rounds"]) / sum(e["against"]["wall_s"] for e in record["rounds"])
    verdict = "PASS" if total <= TARGET else "FAIL"
    differ = [f"{d['task_id']} {d['sample']} ({d['commit']} / {d['against']})"
              for entry in record["rounds"] for d in entry["differ"]]
    lines += ["", f"[{verdict}] `{new}` / `{old}` wall time, all rounds together: {total:.3f} (target ≤ {TARGET}); "
              f"per round, median [min–max]: {ratios(record, 'wall_s')}. Grader process CPU per round: {ratios(record, 'cpu_s')}. "
              f"Verdicts differing: {', '.join(differ) or 'none'}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    arguments = parse_args()
    result = run(arguments)
    write_json(arguments.out, result)
    print(markdown(result))
