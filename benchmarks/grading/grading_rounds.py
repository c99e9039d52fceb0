"""Grading, paired per round: ours vs the Math-Verify loop, with and without repeated answers.

    nice python benchmarks/grading/grading_rounds.py          # writes benchmarks/grading/results/grading_rounds.json

Two corpora of ``--n`` completions from the mirror, built as in ``grading.py``:

  realistic   each problem's n samples (8; 32 for AMC/AIME) share a handful of final answers,
              as sampled completions do (~8 completions per distinct (gold, answer) pair)
  distinct    one completion per (kind, answer) of each problem, and no (gold, boxed answer)
              pair twice: nothing for our deduplication to remove

Each round grades each corpus with ours (``get_grader("math")``, 2 workers) and the
Math-Verify loop back to back, each in a fresh process (``grading.spawn``), the order
alternating by round; the ratio MV loop / ours is taken per round (CPU time: user + sys of
the process and its children; wall time beside it). Ours' gain on the distinct corpus is
what batching by gold, the box extraction and the workers give without deduplication; the
quotient of the two corpora's median gains is what deduplication adds on the realistic one.
Math-Verify memoises its last 20 parses, so the loop also profits from repeated answers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from grading.grading import (ROOT, _text_of_size, build_corpus, completion, distinct_answers,  # noqa: E402
                             load_problems, reasoning_texts, spawn)

OUT = Path(__file__).resolve().parent / "results" / "grading_rounds.json"
METHODS = ("ours", "mv_loop")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--n", type=int, default=4000, help="completions per corpus")
    add("--rounds", type=int, default=5)
    add("--seed", type=int, default=0)
    add("--mirror", default=os.environ.get("FPA_DATA_MIRROR", str(ROOT.parent / "shared" / "data")))
    add("--out", default=str(OUT))
    return parser.parse_args(argv)


def distinct_corpus(problems, texts: list[str], n: int, seed: int) -> list[dict]:
    """``n`` completions whose (gold, boxed answer) pairs are all different (unboxed ones have no pair)."""
    from fpa.grading.answers import last_boxed

    rng, seen, corpus = random.Random(seed), set(), []
    golds_of: dict[str, list[str]] = {}
    for problem, _ in problems:
        golds_of.setdefault(problem.source, []).append(problem.answer)
    for index in rng.sample(range(len(problems)), len(problems)):
        problem = problems[index][0]
        for kind, answer in distinct_answers(problem.answer, golds_of[problem.source], rng):
            size = rng.randint(2000, 8000) if rng.random() < 0.25 else rng.randint(100, 600)
            text = completion(kind, answer, problem.problem[:300] + "\n" + _text_of_size(texts, size, rng), rng)
            key = (problem.answer, last_boxed(text))
            if key[1] is not None and key in seen:
                continue
            seen.add(key)
            corpus.append({"gold": problem.answer, "completion": text})
            if len(corpus) == n:
                return corpus
    raise ValueError(f"--n {n}: the mirror's problems give only {len(corpus)} distinct completions")


def duplication(corpus: list[dict]) -> float:
    """Boxed completions per distinct (gold, boxed answer) pair."""
    from fpa.grading.answers import last_boxed

    keys = [(r["gold"], last_boxed(r["completion"])) for r in corpus]
    boxed = [key for key in keys if key[1] is not None]
    return len(boxed) / len(set(boxed))


def run(args):
    mirror = Path(args.mirror)
    problems, texts = load_problems(mirror), reasoning_texts(mirror)
    corpora = {"realistic": [{"gold": r["gold"], "completion": r["completion"]}
                             for r in build_corpus(problems, texts, args.n, args.seed)],
               "distinct": distinct_corpus(problems, texts, args.n, args.seed)}
    results = {"args": {k: v for k, v in vars(args).items() if k not in ("out", "table")},
               "cpu_count": os.cpu_count(), "load_average": [os.getloadavg()[0]],
               "duplication": {name: duplication(corpus) for name, corpus in corpora.items()},
               "rounds": []}
    with tempfile.TemporaryDirectory() as workdir:
        paths = {}
        for name, corpus in corpora.items():
            paths[name] = str(Path(workdir) / f"{name}.json")
            Path(paths[name]).write_text(json.dumps([(r["completion"], r["gold"]) for r in corpus]))
        for round_ in range(args.rounds):
            entry = {}
            for name, path in paths.items():
                order = METHODS if round_ % 2 == 0 else METHODS[::-1]
                done = {method: spawn(method, path, ROOT / "src") for method in order}
                if any(len(result["verdicts"]) != args.n for result in done.values()):
                    raise RuntimeError(f"round {round_ + 1}: {name}: a method did not grade all {args.n} completions")
                entry[name] = {method: {k: v for k, v in result.items() if k != "verdicts"}
                               for method, result in done.items()}
            results["rounds"].append(entry)
            results["load_average"].append(os.getloadavg()[0])
            print(f"round {round_ + 1}: " + ", ".join(
                f"{name} MV/ours CPU {e['mv_loop']['cpu_s'] / e['ours']['cpu_s']:.2f}" for name, e in entry.items()),
                flush=True)
    from fpa.io import write_json

    write_json(args.out, results)
    print(markdown(results))


def _gain(results, corpus, unit):
    return [r[corpus]["mv_loop"][unit] / r[corpus]["ours"][unit] for r in results["rounds"]]


def _spread(values):
    return f"{statistics.median(values):.2f} [{min(values):.2f}–{max(values):.2f}]"


def markdown(results):
    """Per corpus: median seconds of each side, and MV loop / ours per round (median [min–max])."""
    a = results["args"]
    lines = [f"{a['n']:,} completions per corpus, {len(results['rounds'])} rounds, each method in a fresh process; "
             f"CPU only, {results['cpu_count']} cores, 1-min load average {results['load_average'][0]:.1f} → "
             f"{results['load_average'][-1]:.1f}.", "",
             "| corpus | completions per distinct pair | ours CPU s | MV loop CPU s | MV loop / ours, CPU "
             "| ours wall s | MV loop wall s | MV loop / ours, wall |",
             "|---|---:|---:|---:|---|---:|---:|---|"]
    for corpus in ("realistic", "distinct"):
        med = {(m, u): statistics.median(r[corpus][m][u] for r in results["rounds"])
               for m in METHODS for u in ("cpu_s", "wall_s")}
        lines.append(f"| {corpus} | {results['duplication'][corpus]:.2f} | {med['ours', 'cpu_s']:.1f} | "
                     f"{med['mv_loop', 'cpu_s']:.1f} | {_spread(_gain(results, corpus, 'cpu_s'))} | "
                     f"{med['ours', 'wall_s']:.1f} | {med['mv_loop', 'wall_s']:.1f} | "
                     f"{_spread(_gain(results, corpus, 'wall_s'))} |")
    dedup = [real / dist for real, dist in zip(_gain(results, "realistic", "cpu_s"),
                                               _gain(results, "distinct", "cpu_s"))]
    lines += ["", f"What deduplication adds on the realistic corpus (its CPU gain / the distinct corpus' gain, "
                  f"per round): {_spread(dedup)}×."]
    return "\n".join(lines)



def markdown_headline(results) -> str:
    """The index's line: the Math-Verify loop's CPU time over ours, per corpus."""
    return "; ".join(f"Math-Verify loop / ours CPU time, {corpus} corpus: {_spread(_gain(results, corpus, 'cpu_s'))}"
                     for corpus in ("realistic", "distinct"))

if __name__ == "__main__":
    run(parse_args())
