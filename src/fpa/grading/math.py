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
from multiprocessing import connection as mp_connection
from dataclasses import dataclass

from fpa.grading.answers import last_boxed

STARTUP_S = 120.0  # a fresh worker imports nothing (forkserver) but builds the parser
RULES = ("no_boxed", "math_verify", "exact_string", "parse_error", "timeout", "worker_died")

_SPACING = re.compile(r"\\left\b|\\right\b|\\[!,;: ]|\$|\s+")


@dataclass(frozen=True)
class GradeResult:
    correct: bool
    rule: str  # one of RULES
    extracted: str | None  # content of the last \boxed{}, None if there is none


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


def grade_math(completion: str, gold: str) -> GradeResult:
    """Grade one completion against a gold answer string (no time limit: see ``grade_many``)."""
    from math_verify import verify

    extracted = last_boxed(completion)
    if extracted is None:
        return GradeResult(False, "no_boxed", None)
    gold_parsed, pred_parsed = _parse(gold), _parse(extracted)
    if gold_parsed and pred_parsed and verify(gold_parsed, pred_parsed, timeout_seconds=None):
        return GradeResult(True, "math_verify", extracted)
    if same_string(extracted, gold):
        return GradeResult(True, "exact_string", extracted)
    if not gold_parsed or not pred_parsed:
        return GradeResult(False, "parse_error", extracted)
    return GradeResult(False, "math_verify", extracted)


def grade_many(pairs, workers: int = 2, timeout_s: float = 10.0) -> list[GradeResult]:
    """Grade ``(completion, gold)`` pairs in ``workers`` processes, at most ``timeout_s`` each.

    A pair that runs over its time is graded ``timeout`` (``exact_string`` if the
    strings match) and its worker is killed; a fresh one takes over while pairs
    remain. The clock of a pair starts when a warmed-up worker receives it.
    Order is preserved.
    """
    pairs = list(pairs)
    if workers < 1:
        raise ValueError(f"workers: expected an integer >= 1, got {workers!r}")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s: expected a number > 0, got {timeout_s!r}")
    results: list[GradeResult | None] = [None] * len(pairs)
    todo = collections.deque(range(len(pairs)))
    pool = [_Worker() for _ in range(min(workers, len(pairs)))]
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
                    index = worker.task
                    results[index] = worker.collect(*pairs[index], ready=worker.conn in ready)
                    if worker.state == "dead" and todo:
                        worker.start()
                if worker.state == "idle" and todo:
                    worker.submit(todo.popleft(), pairs, timeout_s)
    finally:
        for worker in pool:
            worker.close()
    return results


def _without_worker(completion: str, gold: str, rule: str) -> GradeResult:
    """Result for a pair whose worker was lost: only the (linear-time) string rule applies."""
    extracted = last_boxed(completion)
    if extracted is not None and same_string(extracted, gold):
        return GradeResult(True, "exact_string", extracted)
    return GradeResult(False, rule if extracted is not None else "no_boxed", extracted)


def _serve(conn) -> None:
    # Math-Verify warns once per process that its timeout is disabled; that is on purpose.
    logging.getLogger("math_verify").setLevel(logging.ERROR)
    grade_math("\\boxed{\\frac{1}{2}}", "0.5")  # first call builds the parser (~1 s)
    conn.send("ready")
    while (task := conn.recv()) is not None:
        conn.send(grade_math(*task))


def _context():
    # forkserver: workers fork from a server that has already imported Math-Verify
    # and sympy, and never inherit the caller's threads.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["fpa.grading.math", "math_verify"])
    return context


class _Worker:
    """One grading process. ``state``: starting -> idle <-> busy; busy -> dead on timeout."""

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

    def submit(self, task: int, pairs: list, timeout_s: float) -> None:
        self.state, self.task, self.deadline = "busy", task, time.monotonic() + timeout_s
        self.conn.send(pairs[task])

    def collect(self, completion: str, gold: str, ready: bool) -> GradeResult:
        """The result of the current task; on timeout or a dead worker, kill it."""
        try:
            if ready:
                result = self.conn.recv()
                self.state, self.task = "idle", None
                return result
            rule = "timeout"
        except (EOFError, OSError):
            rule = "worker_died"
        self.close()
        return _without_worker(completion, gold, rule)

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
