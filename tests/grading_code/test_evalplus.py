"""MBPP+ and HumanEval+: every canonical solution of the tiny files passes, a wrong one fails."""

from __future__ import annotations

import json
import math
import pickle

import pytest
from code_helpers import TINY

pytest.importorskip("evalplus", reason="evalplus not installed (pip install --no-deps evalplus==0.3.1)")

from fpa.evaluation.metrics import pass_at_1  # noqa: E402
from fpa.grading.code import gold_program, gold_selfcheck_code, grade_code_many, load_tasks, make_sandbox  # noqa: E402
from fpa.grading.code.mbppplus import DATASETS, grade_task  # noqa: E402


@pytest.mark.parametrize("bench", ["mbppplus", "humanevalplus"])
def test_gold_passes_and_wrong_fails(bench, mirror):
    tasks = load_tasks(bench, mirror / TINY[bench])
    assert len(tasks) == 20
    # Gold and wrong of a task share one sandbox run (the expected outputs are computed once).
    pairs = [(gold_program(bench, task), task_id) for task_id, task in tasks.items()]
    pairs += [(f"def {task['entry_point']}(*a, **k):\n    return None\n", task_id) for task_id, task in tasks.items()]
    verdicts = grade_code_many(bench, pairs, tasks=tasks, workers=2)
    gold, wrong = verdicts[:20], verdicts[20:]
    failed = {task_id: rule for (_, task_id), (ok, rule) in zip(pairs, gold) if not ok}
    print(f"{bench} tiny gold: {20 - len(failed)}/20")
    assert not failed
    assert not any(ok for ok, _ in wrong), [v for v in wrong if v[0]]
    assert {rule for _, rule in wrong} <= {"evalplus_base_fail", "evalplus_plus_fail"}


def test_gold_selfcheck_code_report(mirror):
    report = gold_selfcheck_code(mirror, "mbppplus", workers=2, data_path=mirror / TINY["mbppplus"])
    assert (report["bench"], report["passed"], report["total"], report["failed"], report["known"]) == ("mbppplus", 20, 20, {}, {})


def test_pass_at_1_over_matrix(mirror):
    tasks = load_tasks("mbppplus", mirror / TINY["mbppplus"])
    task_ids = list(tasks)[:2]
    gold = "```python\n" + tasks[task_ids[0]]["prompt"] + tasks[task_ids[0]]["canonical_solution"] + "```"
    pairs = [(gold, task_ids[0]), ("def nope(:", task_ids[0]), ("print(1)", task_ids[1]), ("", task_ids[1])]
    verdicts = grade_code_many("mbppplus", pairs, tasks=tasks)
    matrix = [[int(verdicts[0][0]), int(verdicts[1][0])], [int(verdicts[2][0]), int(verdicts[3][0])]]
    assert matrix == [[1, 0], [0, 0]]
    assert pass_at_1(matrix) == 0.25


def test_unknown_task_and_bench_rejected(mirror):
    with pytest.raises(ValueError, match="unknown task ids"):
        grade_code_many("mbppplus", [("x", "Mbpp/999999")], data_path=mirror / TINY["mbppplus"])
    with pytest.raises(ValueError, match="bench: expected one of"):
        grade_code_many("apps", [("x", "1")])


# The old in-process path, kept here only as the peer: EvalPlus's own trusted_exec and
# untrusted_check (which compares in the candidate's process) in one sandbox run, called directly.
PEER = r"""
import json, pickle, sys
from evalplus.eval import untrusted_check
from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS
from evalplus.gen.util import trusted_exec
dataset, task, programs = pickle.loads(sys.stdin.buffer.read())
not_none = dataset == "mbpp" and task["entry_point"] in MBPP_OUTPUT_NOT_NONE_TASKS
oracle = {split: trusted_exec(task["prompt"] + task["canonical_solution"], task[split + "_input"], task["entry_point"],
                              record_time=True, output_not_none=not_none) for split in ("base", "plus")}
verdicts = []
for code in programs:
    verdict = "evalplus_pass"
    for split in ("base", "plus"):
        expected, ref_time = oracle[split]
        status = untrusted_check(dataset, code, task[split + "_input"], task["entry_point"], expected=expected,
                                 atol=task["atol"], ref_time=ref_time, fast_check=True)[0]
        if status != "pass":
            verdict = f"evalplus_{split}_{status}"
            break
    verdicts.append(verdict)
print(json.dumps(verdicts))
"""
# Honest programs, right and wrong: the canonical solution with its top-level result transformed
# (recursive calls untouched), or replaced; each exercises one of EvalPlus's comparison rules.
TRANSFORMED = """
_fpa_impl, _fpa_depth, _fpa_calls = {entry}, [0], [0]
def {entry}(*args):
    _fpa_depth[0] += 1
    try:
        out = _fpa_impl(*args)
    finally:
        _fpa_depth[0] -= 1
    if _fpa_depth[0]:
        return out
    _fpa_calls[0] += 1
    {transform}
"""
TRANSFORMS = {
    "gold": "return out",
    "tuple": "return tuple(out) if isinstance(out, list) else out",  # (1,) != [1]
    "reversed": "return out[::-1] if isinstance(out, list) else out",  # right only for the set-equality tasks
    "generator": "return iter(out) if isinstance(out, list) else out",  # right only for the set-equality tasks
    "float_noise": "return out * (1 + 1e-9) if isinstance(out, float) else out",  # within atol where there is one
    "float_off": "return out + 1e-3 if isinstance(out, float) else out",  # beyond any atol
    "int_as_float": "return float(out) if type(out) is int else out",  # 3.0 == 3
    "plus_wrong": "return out if _fpa_calls[0] <= {n_base} else None",  # passes base, fails plus
    "raises": "raise ValueError(out)",
}
# set equality, a list, floats; floats with an atol, a list
PEER_TASKS = {"mbppplus": ["Mbpp/2", "Mbpp/4", "Mbpp/14"], "humanevalplus": ["HumanEval/2", "HumanEval/5"]}


def honest_programs(bench: str, task: dict) -> list[str]:
    gold = gold_program(bench, task)
    programs = [gold + TRANSFORMED.format(entry=task["entry_point"], transform=transform.format(
        n_base=len(task["base_input"]))) for transform in TRANSFORMS.values()]  # fmt: skip
    return programs + [gold + f"\ndef {task['entry_point']}(:\n", f"def {task['entry_point']}(*a):\n    return None\n"]


def peer_verdicts(bench: str, task: dict, programs: list[str], sandbox) -> list[str]:
    job = pickle.dumps((DATASETS[bench], task, programs))
    result = sandbox.run_python(PEER, stdin=job, timeout_s=sandbox.limits.timeout_s + 2 * 62 * len(programs),
                                env={"EVALPLUS_MAX_MEMORY_BYTES": str(sandbox.limits.memory_bytes)})  # fmt: skip
    assert result.ok, result.stderr[-2000:]
    return json.loads(result.stdout)


def split_path_equals_untrusted_check(bench: str, task_ids: list[str], mirror) -> None:
    tasks = load_tasks(bench, mirror / TINY[bench])
    sandbox = make_sandbox(bench)
    for task_id in task_ids:
        programs = honest_programs(bench, tasks[task_id])
        ours = [rule for _, rule in grade_task(bench, tasks[task_id], programs, sandbox)]
        peer = peer_verdicts(bench, tasks[task_id], programs, sandbox)
        assert ours == peer, (task_id, list(zip(list(TRANSFORMS) + ["syntax", "none"], ours, peer)))


@pytest.mark.parametrize("bench", ["mbppplus", "humanevalplus"])
def test_verdicts_equal_evalplus_untrusted_check(bench, mirror):
    """The split path (values out, compared on the host) gives EvalPlus's own verdicts on honest
    programs: set equality, tuples, generators, float tolerance, int/float, base/plus, errors."""
    split_path_equals_untrusted_check(bench, PEER_TASKS[bench], mirror)


@pytest.mark.slow  # every task of the tiny files, 10 programs each, both paths
@pytest.mark.parametrize("bench", ["mbppplus", "humanevalplus"])
def test_verdicts_equal_evalplus_untrusted_check_tiny_files(bench, mirror):
    split_path_equals_untrusted_check(bench, list(load_tasks(bench, mirror / TINY[bench])), mirror)


def test_split_status_from_the_lines_a_candidate_sent():
    from fpa.grading.code.evalplus_outputs import Expected, split_status

    line, nan_line, done = '["value", [1, 2]]', '["value", [NaN]]', '["done"]'
    lists, nans = Expected([line], [[1, 2]], [0.1]), Expected([nan_line], [[math.nan]], [0.1])

    def status(expected, lines, end="exited"):
        return split_status("humaneval", "f", [[0]], expected, 0, lines, end)

    assert status(lists, [line, done]) == "pass"
    assert status(lists, ['["value", [1.0, 2.0]]', done]) == "pass"  # 1.0 == 1, as in Python
    assert status(lists, ['["value", {"tuple": [1, 2]}]', done]) == "fail"  # (1, 2) != [1, 2]
    assert status(nans, [nan_line, done]) == "fail"  # the canonical's own line, but NaN equals nothing
    assert status(lists, ['["opaque", "AlwaysEqual"]', done]) == "fail"
    assert status(lists, [line]) == "timeout"  # died before its end: untrusted_check's unknown status
    assert status(lists, [line, '["raised", "ValueError"]']) == "fail"
    assert status(lists, [done]) == "fail"  # fewer outputs than inputs
    assert status(lists, ['{"forged": 1}', done]) == "fail"
    assert status(lists, [line, done], end="too_large") == "fail"


def test_a_candidate_that_kills_the_harness_fails_alone(mirror):
    """The run dies with the candidate it was running; that one takes the run's verdict, the
    candidates after it are graded in a new run."""
    tasks = load_tasks("mbppplus", mirror / TINY["mbppplus"])
    task = tasks["Mbpp/4"]
    killer = "import ctypes, os\nctypes.CDLL(None).kill(os.getppid(), 9)\n" + task["canonical_solution"]
    gold = gold_program("mbppplus", task)
    verdicts = grade_task("mbppplus", task, [gold, killer, gold], make_sandbox("mbppplus"))
    assert verdicts == [(True, "evalplus_pass"), (False, "evalplus_harness_error"), (True, "evalplus_pass")]


def test_an_output_that_cannot_cross_stops_the_split_but_where_any_object_passes(mirror):
    """No comparison passes an ``Opaque`` output but the oracles that pass any object, so the
    candidate stops there, as ``fast_check`` stops at a failure; Mbpp/737's output only needs to
    be not None (``MBPP_OUTPUT_NOT_NONE_TASKS``), so an object where its canonical matches (and None
    where it does not) runs every input and passes. (An object on every input would fail at
    'dawood', where the host stops it if the stop arrives before the child's last line: a race.)"""
    from fpa.grading.code import mirror_task_file
    from fpa.grading.code.mbppplus import candidate_records, expected_outputs

    tasks, sandbox = load_tasks("mbppplus", mirror_task_file("mbppplus", mirror)), make_sandbox("mbppplus")
    programs = {"Mbpp/4": "def heap_queue_largest(*args):\n    return object()\n",
                "Mbpp/737": "import re\ndef check_str(string):\n    return object() if re.match('[aeiouAEIOU]', string) "
                            "else None\n"}
    # Mbpp/4: the child breaks after its opaque line while the host, which fails that line too,
    # may stop it first; either way nothing more is sent
    for task_id, (lines, ends, status) in {"Mbpp/4": (1, {"exited", "stopped"}, "fail"),
                                           "Mbpp/737": (len(tasks["Mbpp/737"]["base_input"]) + 1, {"exited"}, "pass")}.items():
        task = tasks[task_id]
        expected, _ = expected_outputs("mbppplus", task, sandbox)
        caps = {split: 1 << 20 for split in expected}
        records, _ = candidate_records("mbppplus", task, [programs[task_id]], expected, caps, sandbox)
        sent, end, verdict = records[0, "base"]
        assert (len(sent), end in ends, verdict) == (lines, True, status), (task_id, sent, end)
        assert sent[0].startswith('["opaque"'), task_id


def test_split_check_fails_at_the_first_failing_line():
    """The host stops a candidate where ``SplitCheck.add`` says its split failed; the status of
    the lines up to there, stopped, is the status of the whole split."""
    from fpa.grading.code.evalplus_outputs import Expected, SplitCheck, split_status

    lines = ['["value", 1]', '["value", 2]', '["value", 3]']
    expected = Expected(lines, [1, 2, 3], [0.1] * 3)
    sent = ['["value", 1]', '["value", 5]', '["value", 3]', '["done"]']
    check = SplitCheck("mbpp", "f", [[0], [1], [2]], expected, 0)
    assert [check.add(line) for line in sent] == [False, True, False, False]
    assert check.status("stopped") == split_status("mbpp", "f", [[0], [1], [2]], expected, 0, sent, "exited") == "fail"


STOPPED = """
import time
_calls = [0]
def {entry}(*args):
    _calls[0] += 1
    if _calls[0] > 1:
        time.sleep(30)  # past the per-input limit: a TimeoutException, unless stopped before
    return "wrong"
"""


def test_a_candidate_is_stopped_at_its_first_wrong_output(mirror):
    """A wrong value on input 0, then a sleep: the host stops it after its first line, and the run
    goes on with the next candidate (the gold, which passes)."""
    from fpa.grading.code.mbppplus import candidate_records, expected_outputs

    task, sandbox = load_tasks("mbppplus", mirror / TINY["mbppplus"])["Mbpp/4"], make_sandbox("mbppplus")
    expected, _ = expected_outputs("mbppplus", task, sandbox)
    caps = {split: 1 << 20 for split in expected}
    programs = [STOPPED.format(entry=task["entry_point"]), gold_program("mbppplus", task)]
    records, _ = candidate_records("mbppplus", task, programs, expected, caps, sandbox)
    lines, end, status = records[0, "base"]
    assert (len(lines), end, status) == (1, "stopped", "fail")  # inputs 1.. never ran past their start
    assert (0, "plus") not in records and records[1, "plus"][1:] == ("exited", "pass")
