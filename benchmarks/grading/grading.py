"""Grading throughput: the project's math grader against Math-Verify, side by side.

    python benchmarks/grading/grading.py                    # N = 30,000; writes benchmarks/grading/results/grading.json
    python benchmarks/grading/grading.py --n 2000           # smoke run
    python benchmarks/grading/grading.py --baseline /tmp/old/src   # also the grader of another checkout
    # a baseline checkout of an earlier commit: mkdir /tmp/old && git archive <rev> | tar -x -C /tmp/old

Completions are built from the real benchmark files of the data mirror (``$FPA_DATA_MIRROR``,
default ``../shared/data``), problem after problem, as the evaluate CLI grades them: each
problem gets its configured n (8; 32 for AMC/AIME) samples, which repeat a handful of
distinct final answers: the gold, an equivalent form of it (``\\dfrac``, decimal, spacing,
thousands separators, ``\\left(``), wrong answers, and unparseable ones (no box, garbage
in the box, a truncated last box). A quarter of the samples carry several thousand
characters of reasoning (real MATH solution text) before the box.

Methods, each in a fresh process (no cache carries over), timed around the grading call:

  ours            ``get_grader("math")(pairs)`` as ``fpa evaluate`` calls it (2 workers)
  ours, all cores ``grade_many(pairs, workers=os.cpu_count())``; only where that is not 2
  baseline        ``get_grader("math")`` of the ``--baseline`` source tree
  floor           the distinct (gold, answer) pairs graded once each, serially in one warm
                  process: the Math-Verify work that no pool or cache layout removes
  MV loop         ``verify(parse("\\boxed{" + gold + "}"), parse(completion))`` per pair,
                  Math-Verify's defaults (its signal timeouts), gold parsed per call
  MV pool         the same function in ``multiprocessing.Pool()`` (one process per core)

Math-Verify and the floor are warmed up (parser built) before the clock starts; ours starts
its worker processes inside the timed call, as the evaluate CLI does. CPU s is user + sys of the
process and all its children (workers, forkserver), which other jobs on shared cores do
not inflate; wall s is what a user waits. The 1-min load average is printed at start and end.
Every verdict where ours and Math-Verify disagree is listed with both extractions.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from decimal import Decimal
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "results" / "grading.json"
CONFIG = ROOT / "config" / "benchmarks.yaml"
TARGET_S, TARGET_RATIO = 30.0, 2.0
GARBAGE = ("", "?", "\\text{I could not finish}", "x^{)", "\\frac{}{}", "see above")
BOX_FORMATS = ("$\\boxed{%s}$", "\\boxed{%s}", "\\boxed{ %s }", "\\[\n\\boxed{%s}\n\\]")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--n", type=int, default=30_000, help="completions to grade")
    add("--seed", type=int, default=0, help="seed of the completion mix")
    add("--mirror", default=os.environ.get("FPA_DATA_MIRROR", str(ROOT.parent / "shared" / "data")))
    add("--baseline", help="src/ directory of another checkout: its get_grader('math') is timed too")
    add("--out", default=str(OUT))
    add("--worker", help=argparse.SUPPRESS)
    add("--corpus", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- completions
def load_problems(mirror: Path) -> list[tuple[object, int]]:
    """Every problem of every available benchmark with its n samples, in file order."""
    from fpa.data.benchmarks import load_benchmark
    from fpa.data.download import read_benchmarks_config

    problems = []
    for name, entry in read_benchmarks_config(CONFIG)["benchmarks"].items():
        if "missing" not in entry:
            problems += [(p, entry["n_samples"]) for p in load_benchmark(entry["loader"], mirror / entry["path"], name)]
    return problems


def reasoning_texts(mirror: Path) -> list[str]:
    """Real MATH test solutions, boxes removed, as the reasoning before an answer."""
    from fpa.io import read_jsonl

    return [row["solution"].replace("\\boxed", "") for row in read_jsonl(mirror / "math" / "test.jsonl")]


def equivalents(gold: str) -> list[str]:
    """Forms of ``gold`` that are equal by construction (the grader should credit them)."""
    forms = []
    if "\\frac" in gold:
        forms.append(gold.replace("\\frac", "\\dfrac"))
    fraction = re.fullmatch(r"(-?)\\frac\{(\d+)\}\{(\d+)\}", gold)
    if fraction and int(fraction[3]) and set(_prime_factors(int(fraction[3]))) <= {2, 5}:
        forms.append(fraction[1] + format(Decimal(int(fraction[2])) / Decimal(int(fraction[3])), "f"))
    if re.fullmatch(r"-?\d+", gold):
        forms.append(gold + ".0")
        if abs(int(gold)) >= 1000:
            forms.append(f"{int(gold):,}")
    if ", " in gold:
        forms.append(gold.replace(", ", ","))
    elif "," in gold:
        forms.append(gold.replace(",", ", "))
    if gold.startswith("(") and gold.endswith(")"):
        forms.append("\\left" + gold[:-1] + "\\right)")
    return forms


def _prime_factors(number: int) -> list[int]:
    factors, divisor = [], 2
    while number > 1 and divisor <= number:
        while number % divisor == 0:
            factors.append(divisor)
            number //= divisor
        divisor += 1
    return factors


def wrong_answers(gold: str, others: list[str], rng: random.Random) -> list[str]:
    if re.fullmatch(r"-?\d+", gold):
        return [str(int(gold) + delta) for delta in (1, -1, 2, 10)] + [str(2 * int(gold) + 1)]
    return [answer for answer in rng.sample(others, 5) if answer != gold]


def distinct_answers(gold: str, others: list[str], rng: random.Random) -> list[tuple[str, str]]:
    """A handful of (kind, answer) that the n samples of one problem share."""
    pools = {"gold": [gold], "equivalent": equivalents(gold), "wrong": wrong_answers(gold, others, rng),
             "no_box": [gold, rng.choice(others)], "garbage": list(GARBAGE), "truncated": [gold]}
    weights = {"gold": 4, "equivalent": 2, "wrong": 4, "no_box": 1, "garbage": 1, "truncated": 1}
    chosen: list[tuple[str, str]] = []
    for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 5))):
        kinds = [kind for kind in pools if pools[kind]]
        kind = rng.choices(kinds, [weights[kind] for kind in kinds])[0]
        answer = pools[kind].pop(rng.randrange(len(pools[kind])))
        if (kind, answer) not in chosen:
            chosen.append((kind, answer))
    return chosen


def completion(kind: str, answer: str, reasoning: str, rng: random.Random) -> str:
    if kind == "no_box":
        return f"{reasoning}\n\nSo the answer is {answer}."
    if kind == "truncated":  # an intermediate box, then the output stops inside the last one
        cut = answer[: len(answer) // 2]
        return f"First guess: $\\boxed{{{answer}}}$.\n{reasoning}\n\nThe final answer is $\\boxed{{{cut}"
    return f"{reasoning}\n\nThe final answer is {rng.choice(BOX_FORMATS) % answer}."


def build_corpus(problems, texts: list[str], n: int, seed: int) -> list[dict]:
    """``n`` completions, problem after problem (shuffled), each problem's samples together."""
    rng = random.Random(seed)
    golds_of: dict[str, list[str]] = {}
    for problem, _ in problems:
        golds_of.setdefault(problem.source, []).append(problem.answer)
    corpus, order = [], []
    while len(corpus) < n:
        if not order:  # every problem once before any repeats
            order = rng.sample(range(len(problems)), len(problems))
        problem, n_samples = problems[order.pop()]
        answers = distinct_answers(problem.answer, golds_of[problem.source], rng)
        shares = [rng.random() ** 2 + 0.05 for _ in answers]
        for _ in range(min(n_samples, n - len(corpus))):
            kind, answer = rng.choices(answers, shares)[0]
            long = rng.random() < 0.25
            size = rng.randint(2000, 8000) if long else rng.randint(100, 600)
            reasoning = problem.problem[:300] + "\n" + _text_of_size(texts, size, rng)
            corpus.append({"id": problem.id, "benchmark": problem.source, "gold": problem.answer, "kind": kind,
                           "long": long, "completion": completion(kind, answer, reasoning, rng)})
    return corpus


def _text_of_size(texts: list[str], size: int, rng: random.Random) -> str:
    parts, length = [], 0
    while length < size:
        parts.append(rng.choice(texts))
        length += len(parts[-1])
    return "\n".join(parts)[:size]


# ---------------------------------------------------------------- methods (one fresh process each)
def mv_verdict(pair: tuple[str, str]) -> bool:
    """Math-Verify as its README shows it: parse both, verify, default settings."""
    from math_verify import parse, verify

    completion_text, gold = pair
    return verify(parse("\\boxed{" + gold + "}"), parse(completion_text))


def grade(method: str, pairs: list[tuple[str, str]]) -> list:
    if method in ("ours", "baseline"):
        from fpa.grading import get_grader

        return [list(verdict) for verdict in get_grader("math")(pairs)]
    if method == "ours_all_cores":
        from fpa.grading.math import grade_many

        return [[result.correct, result.rule] for result in grade_many(pairs, workers=os.cpu_count())]
    if method == "floor":
        return distinct_work(pairs)
    if method == "mv_loop":
        return [mv_verdict(pair) for pair in pairs]
    if method == "mv_pool":
        import multiprocessing

        pool = multiprocessing.Pool()
        verdicts = pool.map(mv_verdict, pairs)
        pool.close()
        pool.join()  # reaps the workers, so their CPU time is in RUSAGE_CHILDREN
        return verdicts
    raise ValueError(f"--worker: expected one of {sorted(LABELS)}, got {method!r}")


def distinct_work(pairs: list[tuple[str, str]]) -> list:
    """The floor: each distinct (gold, answer) graded once, in this one warm process, no pool."""
    from fpa.grading.answers import last_boxed
    from fpa.grading.math import grade_answers

    extracted = [last_boxed(completion) for completion, _ in pairs]
    answers_of: dict[str, dict[str, None]] = {}
    for (_, gold), answer in zip(pairs, extracted):
        if answer is not None:
            answers_of.setdefault(gold, {})[answer] = None
    graded = {(gold, result.extracted): result for gold, answers in answers_of.items()
              for result in grade_answers(gold, list(answers))}
    return [[False, "no_boxed"] if answer is None else [graded[gold, answer].correct, graded[gold, answer].rule]
            for (_, gold), answer in zip(pairs, extracted)]


def cpu_s() -> float:
    """User + sys CPU seconds of this process and its reaped descendants."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def time_worker(method: str, corpus_path: str) -> dict:
    pairs = [tuple(pair) for pair in json.loads(Path(corpus_path).read_text())]
    if method.startswith("mv") or method == "floor":
        mv_verdict(("\\boxed{\\frac{1}{2}}", "0.5"))  # build Math-Verify's parser before the clock starts
    cpu, wall = cpu_s(), time.perf_counter()
    verdicts = grade(method, pairs)
    wall = time.perf_counter() - wall
    from multiprocessing import forkserver

    # Our workers are children of the forkserver: stop it (waits for it) so that their CPU
    # time reaches RUSAGE_CHILDREN. ``_stop`` is private; a benchmark may lean on it.
    forkserver._forkserver._stop()
    return {"wall_s": wall, "cpu_s": cpu_s() - cpu, "verdicts": verdicts}


def spawn(method: str, corpus_path: str, src: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_NUM_THREADS": "1"}
    command = [sys.executable, __file__, "--worker", method, "--corpus", corpus_path]
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------- verdicts
def disagreements(corpus: list[dict], ours: list, mv: list[bool]) -> list[dict]:
    """Every (gold, extraction, verdict) where ours and Math-Verify differ, with its count."""
    from math_verify import parse

    from fpa.grading.answers import last_boxed

    cases: Counter = Counter()
    example: dict = {}
    for record, (correct, rule), mv_correct in zip(corpus, ours, mv):
        if correct == mv_correct:
            continue
        mv_parse = parse(record["completion"])
        key = (record["benchmark"], record["gold"], last_boxed(record["completion"]), rule, correct,
               " | ".join(map(str, mv_parse)), mv_correct, record["kind"])
        cases[key] += 1
        example.setdefault(key, record["id"])
    fields = ("benchmark", "gold", "ours_extracted", "ours_rule", "ours_correct", "mv_parse", "mv_correct", "kind")
    return [{**dict(zip(fields, key)), "count": count, "cause": cause(dict(zip(fields, key))), "id": example[key]}
            for key, count in cases.most_common()]


def cause(case: dict) -> str | None:
    """The documented reason for a disagreement (benchmarks/grading/README.md), None if there is none.

    ``exact_string``: our string rule credits an answer that Math-Verify does not.
    ``elsewhere``: Math-Verify on our extracted answer alone agrees with our verdict (no
    answer: wrong), so the two differ only in where the answer is taken from: ours from the
    last closed box, Math-Verify from any match in the text (an earlier box, a bare number).
    """
    if case["ours_rule"] == "exact_string" and not case["mv_correct"]:
        return "exact_string"
    extracted = case["ours_extracted"]
    if extracted is None or mv_verdict(("\\boxed{" + extracted + "}", case["gold"])) == case["ours_correct"]:
        return "elsewhere"
    return None


# ---------------------------------------------------------------- report
LABELS = {"ours": 'ours: get_grader("math"), 2 workers', "ours_all_cores": "ours: grade_many, all cores",
          "baseline": 'baseline: get_grader("math")', "floor": "floor: distinct answers, 1 process",
          "mv_loop": "Math-Verify loop", "mv_pool": "Math-Verify pool"}


def table(times: dict, n: int) -> str:
    base = times["mv_loop"]
    lines = [f"{'method':<38}{'N':>7}{'wall s':>9}{'CPU s':>9}{'compl./s':>10}{'x MV wall':>10}{'x MV CPU':>10}"]
    for method, result in times.items():
        lines.append(f"{LABELS[method]:<38}{n:>7}{result['wall_s']:>9.1f}{result['cpu_s']:>9.1f}"
                     f"{n / result['wall_s']:>10.0f}{base['wall_s'] / result['wall_s']:>10.2f}"
                     f"{base['cpu_s'] / result['cpu_s']:>10.2f}")
    return "\n".join(lines)


def run_methods(args, corpus: list[dict]) -> dict:
    """Wall time, CPU time and verdicts of every method, each in a fresh process."""
    methods = ["ours"] + (["ours_all_cores"] if os.cpu_count() != 2 else [])
    methods += (["baseline"] if args.baseline else []) + ["floor", "mv_loop", "mv_pool"]
    results = {}
    with tempfile.TemporaryDirectory() as workdir:
        corpus_path = str(Path(workdir) / "pairs.json")
        Path(corpus_path).write_text(json.dumps([(record["completion"], record["gold"]) for record in corpus]))
        for method in methods:
            src = Path(args.baseline) if method == "baseline" else ROOT / "src"
            results[method] = spawn(method, corpus_path, src)
            print(f"{LABELS[method]:<38}{results[method]['wall_s']:>8.1f} s wall", flush=True)
    return results


def summary(args, corpus: list[dict], results: dict, load: list[float]) -> dict:
    from fpa.grading.answers import last_boxed

    ours, mv = results["ours"]["verdicts"], results["mv_loop"]["verdicts"]
    cases = disagreements(corpus, ours, mv)
    # Same verdicts as the reference: ours for baseline and floor, the Math-Verify loop for its pool.
    checks = {method: sum(a != b for a, b in zip(result["verdicts"], mv if method == "mv_pool" else ours))
              for method, result in results.items() if method not in ("ours", "mv_loop")}
    times = {method: {k: v for k, v in result.items() if k != "verdicts"} for method, result in results.items()}
    unexplained = sum(case["count"] for case in cases if case["cause"] is None)
    targets = {f"ours: {args.n} gradings in < {TARGET_S:.0f} s wall": times["ours"]["wall_s"] < TARGET_S,
               f"ours >= {TARGET_RATIO:.0f}x the Math-Verify loop (wall)":
                   times["mv_loop"]["wall_s"] / times["ours"]["wall_s"] >= TARGET_RATIO,
               "0 unexplained disagreements with Math-Verify": unexplained == 0}
    kinds = Counter(record["kind"] for record in corpus)
    distinct = {(record["gold"], last_boxed(record["completion"])) for record in corpus}
    text = "\n".join([
        f"{args.n} completions of {len({record['id'] for record in corpus})} problems (seed {args.seed}); "
        f"kinds {dict(kinds)}; {sum(record['long'] for record in corpus)} long (2,000-8,000 chars of reasoning); "
        f"{len({key for key in distinct if key[1] is not None})} distinct (gold, boxed answer) pairs",
        table(times, args.n),
        f"our rules: {dict(Counter(rule for _, rule in ours))}",
        f"verdicts unlike the reference (ours for baseline and floor, MV loop for MV pool): {checks}",
        f"disagreements ours vs Math-Verify: {sum(case['count'] for case in cases)} completions in {len(cases)} "
        f"cases; cases by cause {dict(Counter(case['cause'] for case in cases))}; "
        f"unexplained completions {unexplained}",
        *[f"[{'PASS' if ok else 'FAIL'}] {name}" for name, ok in targets.items()],
        f"1-min load average at start/end: {load[0]:.1f} / {load[1]:.1f} on {os.cpu_count()} cores",
    ])
    versions = {name: metadata.version(name) for name in ("math-verify", "latex2sympy2_extended", "sympy")}
    return {"args": {k: v for k, v in vars(args).items() if k not in ("worker", "corpus", "out")}, "time": times,
            "verdict_checks": checks, "targets": targets, "load_average": load, "kinds": kinds,
            "versions": versions, "table": text, "disagreements": cases}


def markdown(record: dict) -> str:
    """The recorded run's printed table, as a Markdown code block (``report.py``)."""
    return "```\n" + record["table"] + "\n```"


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(time_worker(args.worker, args.corpus)))
        return
    from fpa.io import write_json

    mirror = Path(args.mirror)
    corpus = build_corpus(load_problems(mirror), reasoning_texts(mirror), args.n, args.seed)
    load = [os.getloadavg()[0]]
    results = run_methods(args, corpus)
    load.append(os.getloadavg()[0])
    record = summary(args, corpus, results, load)
    print(record["table"])
    write_json(args.out, record)


if __name__ == "__main__":
    main()
