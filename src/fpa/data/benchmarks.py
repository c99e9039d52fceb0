"""Benchmark loaders: every file becomes a list of ``MathProblem``; the math ones here, the code ones
their benchmark families' (``loaders``).

Each loader reads one mirror file (``config/benchmarks.yaml`` names it) and
normalises its quirks, listed in ``shared/data/MANIFEST.md`` ("Format quirks"):

==================== ============ ====================================================
loader               problem from answer normalisation
==================== ============ ====================================================
gsm8k                question     text after the last ``####``, thousands commas dropped
math500              problem      ``answer`` field (LaTeX, no ``\\boxed``)
math                 problem      last ``\\boxed{}`` of ``solution`` (nested braces)
math_perturb         problem      int/float/str -> str (``16.0`` -> ``"16"``)
gaokao2023en         question     every unescaped ``$`` removed (``$48$, $384$``)
olympiadbench        question     ``final_answer`` list joined by ", ", ``$`` removed
amc                  problem      JSON float -> integer string (``27.0`` -> ``"27"``)
aime                 problem      integer string, zero padding dropped (``"025"``); LaTeX
                                  commands whose backslash JSON read as an escape
                                  restored (AIME 2025: ``"\\frac"`` -> form feed + ``rac``)
aime26               prompt       as aime; the appended instruction is stripped
==================== ============ ====================================================

Ids are strings and stable: MATH's ``unique_id``, else ``<bench>/<upstream id>``,
else ``<bench>/<line index>`` where upstream has no (complete) id.
"""

from __future__ import annotations

import os
import re
from typing import Callable

from fpa.data.text import check_duplicates, check_text
from fpa.data.validate import scan_records
from fpa.samples.rows import check_count, read_records
from fpa.grading import GRADERS, grader_module
from fpa.grading.answers import last_boxed
from fpa.io import ReadBounds
from fpa.samples.records import MathProblem

#: The JSON types of an id and of a numeric answer as upstream files hold them (read_records checks them).
ID = (int, str)
NUMBER = (int, float, str)
AIME26_SUFFIX = "\nPlease reason step by step, and put your final answer within \\boxed{}."
_UNESCAPED_DOLLAR = re.compile(r"(?<!\\)\$")
#: a LaTeX command whose backslash upstream did not escape in JSON: ``"\frac"`` reads as a form feed
#: and ``rac``, ``"\triangle"`` as a tab and ``riangle`` (AIME 2025 records 19, 20, 28)
_MISREAD_COMMAND = re.compile(r"[\x08\x0c](?=[a-z])|\t(?=(?:riangle|imes|heta|ext|frac)\b)")
_MISREAD_AS = {"\x08": "\\b", "\x0c": "\\f", "\t": "\\t"}


def number_to_str(value: int | float | str) -> str:
    """Integral numbers without a decimal point or padding: 27.0 -> "27", "025" -> "25"."""
    if isinstance(value, str):
        text = value.strip()
        return str(int(text)) if re.fullmatch(r"[+-]?\d+", text) else text
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def restore_latex_commands(text: str) -> str:
    """``text`` with each LaTeX command that JSON read as an escape (``\\f``, ``\\b``, ``\\t``) restored."""
    return _MISREAD_COMMAND.sub(lambda match: _MISREAD_AS[match.group()], text)


def strip_dollars(text: str) -> str:
    """Remove math-mode ``$`` delimiters (not ``\\$``) and surrounding space."""
    return _UNESCAPED_DOLLAR.sub("", text).strip()


def load_gsm8k(path: str | os.PathLike, source: str = "gsm8k") -> list[MathProblem]:
    problems = []
    for index, row in enumerate(read_records(path, {"question": str, "answer": str})):
        if "####" not in row["answer"]:
            raise ValueError(f"{path}: record {index}: answer has no '#### ' final answer")
        final = row["answer"].rsplit("####", 1)[1].strip().replace(",", "")
        problems.append(MathProblem(f"{source}/{index}", row["question"], final, source))
    return problems


def load_math500(path: str | os.PathLike, source: str = "math500") -> list[MathProblem]:
    return [
        MathProblem(row["unique_id"], row["problem"], row["answer"].strip(), source)
        for row in read_records(path, {"unique_id": str, "problem": str, "answer": str})
    ]


def load_math(path: str | os.PathLike, source: str = "math") -> list[MathProblem]:
    """Hendrycks MATH rows (train or test): the answer is the solution's last ``\\boxed{}``."""
    problems = []
    for row in read_records(path, {"unique_id": str, "problem": str, "solution": str}):
        answer = last_boxed(row["solution"])
        if answer is None:
            raise ValueError(f"{path}: {row['unique_id']}: solution has no closed \\boxed{{}}")
        problems.append(MathProblem(row["unique_id"], row["problem"], answer.strip(), source))
    return problems


def load_math_perturb(path: str | os.PathLike, source: str) -> list[MathProblem]:
    return [
        MathProblem(f"{source}/{row['problem_id']}", row["problem"], number_to_str(row["answer"]), source)
        for row in read_records(path, {"problem_id": ID, "problem": str, "answer": NUMBER})
    ]


def load_gaokao2023en(path: str | os.PathLike, source: str = "gaokao2023en") -> list[MathProblem]:
    # 92 rows lack ``id``, so the line index is the only id present on every row.
    # Two rows have an empty upstream answer; they are kept (the paper counts 385).
    return [
        MathProblem(f"{source}/{index}", row["question"], strip_dollars(row["answer"]), source)
        for index, row in enumerate(read_records(path, {"question": str, "answer": str}))
    ]


def load_olympiadbench(path: str | os.PathLike, source: str = "olympiadbench") -> list[MathProblem]:
    problems = []
    for row in read_records(path, {"id": ID, "question": str, "final_answer": list}):
        if not all(isinstance(part, str) for part in row["final_answer"]):
            raise ValueError(f"{path}: {row['id']}: field 'final_answer': expected a list of text, got "
                             f"{row['final_answer']!r:.60}")
        answer = ", ".join(strip_dollars(part) for part in row["final_answer"])
        problems.append(MathProblem(f"{source}/{row['id']}", row["question"], answer, source))
    return problems


def load_amc(path: str | os.PathLike, source: str) -> list[MathProblem]:
    return [
        MathProblem(f"{source}/{row['id']}", row["problem"], number_to_str(row["answer"]), source)
        for row in read_records(path, {"id": ID, "problem": str, "answer": NUMBER})
    ]


def load_aime(path: str | os.PathLike, source: str) -> list[MathProblem]:
    """AIME files with ``problem``; ids from upstream ``id`` where present, else the index."""
    problems = []
    for index, row in enumerate(read_records(path, {"problem": str, "answer": NUMBER})):
        key = row.get("id", index)
        problems.append(MathProblem(f"{source}/{key}", restore_latex_commands(row["problem"]),
                                    number_to_str(row["answer"]), source))
    return problems


def load_aime26(path: str | os.PathLike, source: str = "aime26") -> list[MathProblem]:
    problems = []
    for index, row in enumerate(read_records(path, {"prompt": str, "answer": NUMBER})):
        prompt = row["prompt"]
        if not prompt.endswith(AIME26_SUFFIX):
            raise ValueError(f"{path}: record {index}: prompt lacks the expected instruction suffix")
        problem = prompt[: -len(AIME26_SUFFIX)].rstrip()
        problems.append(MathProblem(f"{source}/{index}", problem, number_to_str(row["answer"]), source))
    return problems


#: The math benchmarks' loaders: one grader (``math``) reads every one's answers, so a loader here is a file
#: format's normaliser, not a benchmark family; the code benchmarks' loaders are their families' (``loaders``).
MATH_LOADERS: dict[str, Callable[..., list[MathProblem]]] = {
    "gsm8k": load_gsm8k,
    "math500": load_math500,
    "math": load_math,
    "math_perturb": load_math_perturb,
    "gaokao2023en": load_gaokao2023en,
    "olympiadbench": load_olympiadbench,
    "amc": load_amc,
    "aime": load_aime,
    "aime26": load_aime26,
}


def loaders() -> dict[str, Callable[..., list[MathProblem]]]:
    """A catalog ``loader`` -> its problem loader: the math loaders above, and each code benchmark family's
    prompts (its record's ``load_problems``, keyed by the family's name), read from the grader registry."""
    families = {name: grader.load_problems for name, grader in GRADERS.items() if hasattr(grader, "load_problems")}
    return {**MATH_LOADERS, **families}


def loader_module(loader: str) -> str:
    """The module whose source makes ``loader``'s problems (for a code fingerprint: a family's module is
    imported by name through the registry, which no static import shows)."""
    return __name__ if loader in MATH_LOADERS else grader_module(loader)


def load_benchmark(loader: str, path: str | os.PathLike, source: str, expected: int | None = None,
                   bounds: ReadBounds = ReadBounds(), duplicates: int = 0) -> list[MathProblem]:
    """Load ``path`` with the registered ``loader``; records carry ``source``.

    The file is first read within ``bounds`` (the catalog's, ``fpa.catalog.read_bounds``),
    one record at a time, before the loader holds it whole. Every loader makes one problem of
    each record, so ``expected`` (the catalog's ``records``) is checked on the problems too, and
    each problem's text as the model reads it (``fpa.data.text``): no control character but
    ``\\t\\n\\r``, no lone surrogate, and no repeat after NFC but the catalog's ``duplicate_problems``.
    """
    known = loaders()
    if loader not in known:
        raise ValueError(f"unknown loader {loader!r}; expected one of {sorted(known)}")
    scan_records(path, expected, bounds)
    problems = known[loader](path, source=source)
    check_count(path, len(problems), expected)
    numbers = range(1, len(problems) + 1)
    for number, problem in zip(numbers, problems):
        check_text(problem.problem, f"{path}: record {number}", "problem")
    check_duplicates(path, [problem.problem for problem in problems], numbers, "problem", duplicates)
    return problems
