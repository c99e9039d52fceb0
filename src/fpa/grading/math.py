"""Math answer grading: the completion's last ``\\boxed{}`` against the gold answer.

``grade_math`` decides with the first rule that applies:

============= ======= =================================================================
rule          correct when it decides
============= ======= =================================================================
no_boxed      False   the completion has no closed ``\\boxed{...}`` (or ``\\boxed x``)
math_verify   True    HF Math-Verify: ``verify(parse(gold), parse(extracted))`` on their
                      sympy parses (Math-Verify's raw-string fallback is dropped, so
                      string identity is never credited to Math-Verify)
exact_string  True    Math-Verify said no or could not parse, but the two strings are equal
                      after removing whitespace, ``$``, ``\\left``/``\\right`` and spacing
parse_error   False   no sympy parse of the gold or of the extracted answer
math_verify   False   both parsed, not equivalent, strings differ
timeout       False   (``grade_many`` only) the worker exceeded ``timeout_s`` and was
                      killed; the string rule is still applied in the parent
worker_died   False   (``grade_many`` only) the worker process exited mid-task
============= ======= =================================================================

Math-Verify's own timeouts use ``signal.alarm``, which only works in a main
thread; they are disabled (``parsing_timeout=None``, ``timeout_seconds=None``) and
``grade_many`` enforces the time limit by killing the worker process instead.
``grade_math`` itself has no time limit: call it directly only on trusted input.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import multiprocessing
import re
import time
from dataclasses import dataclass
from multiprocessing import connection as mp_connection
from typing import Iterator, Sequence

from fpa.grading.answers import last_boxed
from fpa.grading.grader import Grader

STARTUP_S = 120.0  # a fresh worker imports nothing (forkserver) but builds the parser
RULES = ("no_boxed", "math_verify", "exact_string", "parse_error", "timeout", "worker_died")

_SPACING = re.compile(r"\\left\b|\\right\b|\\[!,;: ]|\$|\s+")


@dataclass(frozen=True)
class GradeResult:
    correct: bool
    rule: str  # one of RULES
    extracted: str | None  # content of the last \boxed{}, None if there is none


NO_BOXED = GradeResult(False, "no_boxed", None)


def same_string(extracted: str, gold: str) -> bool:
    """String equality up to whitespace, ``$``, ``\\left``/``\\right``, spacing and ``\\dfrac``."""

    def canonical(text: str) -> str:
        text = _SPACING.sub("", text).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
        return text.rstrip(".")

    return canonical(extracted) != "" and canonical(extracted) == canonical(gold)


def _parse(answer: str) -> list:
    """Math-Verify's sympy parses of ``answer``, without its raw-string fallback."""
    from math_verify import parse

    parsed = parse("\\boxed{" + answer + "}", parsing_timeout=None)
    return [item for item in parsed if not isinstance(item, str)]


def grade_answers(gold: str, answers: Sequence[str]) -> Iterator[GradeResult]:
    """Grade extracted answers against one gold, in order, parsing the gold once.

    Each verdict is the one ``grade_math`` gives a completion boxing that answer: the
    rules depend on the answer and gold strings only. An answer equal to the gold
    string reuses the gold's parse (``parse`` is a function of its input).
    Results are produced lazily, so a worker can send each one as it is done.
    """
    from math_verify import verify

    gold_parsed = _parse(gold)
    for extracted in answers:
        pred_parsed = gold_parsed if extracted == gold else _parse(extracted)
        if gold_parsed and pred_parsed and verify(gold_parsed, pred_parsed, timeout_seconds=None):
            yield GradeResult(True, "math_verify", extracted)
        elif same_string(extracted, gold):
            yield GradeResult(True, "exact_string", extracted)
        elif not gold_parsed or not pred_parsed:
            yield GradeResult(False, "parse_error", extracted)
        else:
            yield GradeResult(False, "math_verify", extracted)


def grade_math(completion: str, gold: str) -> GradeResult:
    """Grade one completion against a gold answer string (no time limit: see ``grade_many``)."""
    extracted = last_boxed(completion)
    if extracted is None:
        return NO_BOXED
    return next(grade_answers(gold, [extracted]))


def grade_many(pairs, workers: int = 2, timeout_s: float = 10.0) -> list[GradeResult]:
    """Grade ``(completion, gold)`` pairs in ``workers`` processes, at most ``timeout_s`` each.

    Verdicts are those of ``grade_math`` pair by pair; the work is not. The answers
    are extracted here, each distinct ``(gold, answer)`` is graded once (the samples
    of a problem repeat a handful of answers), and each worker task is one gold with
    its distinct answers, so a gold is parsed once per task. An answer that runs over
    its time is graded ``timeout`` (``exact_string`` if the strings match) and its
    worker is killed; a fresh one takes over the task's remaining answers. The clock
    of an answer starts when its task is sent to a warmed-up worker or when the result
    of the task's previous answer arrives. Order is preserved.
    """
    pairs = list(pairs)
    if workers < 1:
        raise ValueError(f"workers: expected an integer >= 1, got {workers!r}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s: expected a number > 0, got {timeout_s!r}")
    extracted = [last_boxed(completion) for completion, _ in pairs]
    answers_of: dict[str, dict[str, None]] = {}  # gold -> its distinct answers, first seen first
    for (_, gold), answer in zip(pairs, extracted):
        if answer is not None:
            answers_of.setdefault(gold, {})[answer] = None
    graded = _grade_in_pool([(gold, list(answers)) for gold, answers in answers_of.items()], workers, timeout_s)
    return [NO_BOXED if answer is None else graded[gold, answer] for (_, gold), answer in zip(pairs, extracted)]


def _grade_in_pool(tasks: list[tuple[str, list[str]]], workers: int, timeout_s: float) -> dict:
    """``{(gold, answer): GradeResult}`` for every answer of every ``(gold, answers)`` task."""
    graded: dict[tuple[str, str], GradeResult] = {}
    todo = collections.deque(tasks)
    pool = [_Worker() for _ in range(min(workers, len(tasks)))]
    try:
        while active := [worker for worker in pool if worker.state in ("starting", "busy")]:
            wait_s = max(0.0, min(worker.deadline for worker in active) - time.monotonic())
            ready = mp_connection.wait([worker.conn for worker in active], timeout=wait_s)
            for worker in active:
                if worker.conn not in ready and time.monotonic() < worker.deadline:
                    continue
                if worker.state == "starting":
                    worker.await_ready()
                else:
                    worker.collect(graded, todo, timeout_s, ready=worker.conn in ready)
                    if worker.state == "dead" and todo:
                        worker.start()
                if worker.state == "idle" and todo:
                    worker.submit(todo.popleft(), timeout_s)
    finally:
        for worker in pool:
            worker.close()
    return graded


def _answer_lost(extracted: str, gold: str, rule: str) -> GradeResult:
    """Result for an answer whose worker was lost: only the (linear-time) string rule applies."""
    if same_string(extracted, gold):
        return GradeResult(True, "exact_string", extracted)
    return GradeResult(False, rule, extracted)


def _without_worker(completion: str, gold: str, rule: str) -> GradeResult:
    """``_answer_lost`` for a whole completion (no box: ``no_boxed``)."""
    extracted = last_boxed(completion)
    return NO_BOXED if extracted is None else _answer_lost(extracted, gold, rule)


def _serve(conn) -> None:
    # Math-Verify warns once per process that its timeout is disabled; that is on purpose.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    grade_math("\\boxed{\\frac{1}{2}}", "0.5")  # first call builds the parser (~1 s)
    conn.send("ready")
    while (task := conn.recv()) is not None:
        for result in grade_answers(*task):
            conn.send(result)


def _context():
    # forkserver: workers fork from a server that has already imported Math-Verify
    # and sympy, and never inherit the caller's threads.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fpa.grading.math", "math_verify"])
    return context


class _Worker:
    """One grading process. ``state``: starting -> idle <-> busy; busy -> dead on timeout.

    A busy worker holds ``task`` = (gold, answers) and has sent ``done`` of its results.
    """

    def __init__(self) -> None:
        self.start()

    def start(self) -> None:
        context = _context()
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.state, self.task, self.deadline = "starting", None, time.monotonic() + STARTUP_S

    def await_ready(self) -> None:
        try:
            message = self.conn.recv() if self.conn.poll() else None
        except (EOFError, OSError):
            message = None
        if message != "ready":
            self.close()
            raise RuntimeError(f"grading worker failed to start within {STARTUP_S:.0f} s")
        self.state = "idle"

    def submit(self, task: tuple[str, list[str]], timeout_s: float) -> None:
        self.state, self.task, self.done = "busy", task, 0
        self.deadline = time.monotonic() + timeout_s
        self.conn.send(task)

    def collect(self, graded: dict, todo: collections.deque, timeout_s: float, ready: bool) -> None:
        """Store the next result of the task; on timeout or a dead worker, kill it and
        grade the current answer without it, putting the task's other answers back first."""
        gold, answers = self.task
        extracted = answers[self.done]
        try:
            if ready:
                graded[gold, extracted] = self.conn.recv()
                self.done += 1
                self.deadline = time.monotonic() + timeout_s
                if self.done == len(answers):
                    self.state, self.task = "idle", None
                return
            rule = "timeout"
        except (EOFError, OSError):
            rule = "worker_died"
        graded[gold, extracted] = _answer_lost(extracted, gold, rule)
        if self.done + 1 < len(answers):
            todo.appendleft((gold, answers[self.done + 1 :]))
        self.close()

    def close(self) -> None:
        if self.state == "idle":
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(timeout=1)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.conn.close()
        self.state, self.task = "dead", None


def grade_math_many(pairs, workers: int = 2, timeout_s: float = 10.0) -> list[tuple[bool, str]]:
    """``grade_many`` as the grader registry's ``(correct, rule)`` verdicts."""
    return [(result.correct, result.rule) for result in grade_many(pairs, workers=workers, timeout_s=timeout_s)]


GRADERS = (Grader("math", grade_math_many, rewards=("math12k",)),)
