"""Each known way to forge a pass (``forgeries.py``) is graded as a failure, with the reason named.

With the harnesses of d0e18d6 these programs passed (benchmarks/grading/results/forgeries.json
holds every verdict before and after); put that harness back and these tests fail.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from code_helpers import TINY
from forgeries import BCB_TASK, CHEATS, RESIDUAL, TASKS, program

from fpa.grading.code import bigcodebench, grade_code_many, livecodebench, load_tasks
from fpa.sandbox import Sandbox

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FUNCTIONAL_REASONS = {  # LiveCodeBench's functional harness, also code_tests'
    "read_tests": "lcb_runtime_error",  # no tests.json: the expected outputs never enter the sandbox
    "patch_json": "lcb_wrong_answer",  # its own json is patched, not the host's; [-1] is compared here
    "nonce_exit": "lcb_runtime_error",  # no nonce, no verdict line: it exits before returning anything
    "eq_object": "lcb_wrong_answer",  # its object cannot cross as data
    "frame_expected": "lcb_runtime_error",  # no expected output in any frame of the sandbox
}
EVALPLUS_REASONS = {
    "read_tests": "evalplus_base_fail",  # no task file, no canonical solution in the sandbox
    "patch_json": "evalplus_base_fail",
    "nonce_exit": "evalplus_base_timeout",  # a process that died without its outputs: untrusted_check's timeout
    "eq_object": "evalplus_base_fail",
    "frame_expected": "evalplus_base_fail",
}
BIGCODEBENCH_REASONS = {
    "read_tests": "bigcodebench_fail",  # no test file on disk: the import fails
    "patch_json": "bigcodebench_fail",  # the monitor's json writes the output, not the program's
    "nonce_exit": "bigcodebench_incomplete",  # no nonce; the tests never reported their end
    "patch_unittest": "bigcodebench_tampered",
    "skip_tests": "bigcodebench_tampered",
    "raise_skip": "bigcodebench_incomplete",  # a skipped test is not a passed one
    "replace_unittest": "bigcodebench_tampered",  # its TestCases is not a unittest.TestCase; sys.modules replaced
    "build_class": "bigcodebench_tampered",  # TestCases's functions are not the ones the test code compiles to
}


def cheats(bench: str) -> list[str]:
    return [cheat for cheat in CHEATS[bench] if (bench, cheat) not in RESIDUAL]


@pytest.fixture(scope="module")
def lcb_sandbox():
    return Sandbox(dataclasses.replace(livecodebench.LIMITS, timeout_s=2.0))


@pytest.fixture(scope="module")
def livecodebench_verdicts(lcb_sandbox):
    pairs = [(program("livecodebench", cheat), TASKS["livecodebench"][0]) for cheat in CHEATS["livecodebench"]]
    verdicts = grade_code_many("livecodebench", pairs, data_path=FIXTURES / "lcb" / "test6_fixture.jsonl",
                               workers=2, sandbox=lcb_sandbox)  # fmt: skip
    return dict(zip(CHEATS["livecodebench"], verdicts))


@pytest.fixture(scope="module")
def code_tests_verdicts(lcb_sandbox):
    from fpa.grading.code.tests import build_code_train
    from fpa.grading.code.tests import grade_tests_many

    mirror = FIXTURES / "code" / "mirror"
    problems, _ = build_code_train({"taco_train": mirror / "taco" / "train.jsonl"})
    spec = next(problem.answer for problem in problems if problem.id == TASKS["code_tests"][0])
    verdicts = grade_tests_many([(program("code_tests", cheat), spec) for cheat in CHEATS["code_tests"]], workers=2,
                                sandbox=lcb_sandbox)  # fmt: skip
    return dict(zip(CHEATS["code_tests"], verdicts))


@pytest.fixture(scope="module", params=["mbppplus", "humanevalplus"])
def evalplus_verdicts(request, mirror):
    pytest.importorskip("evalplus", reason="evalplus not installed (pip install --no-deps evalplus==0.3.1)")
    bench, task_id = request.param, TASKS[request.param][0]
    tasks = {task_id: load_tasks(bench, mirror / TINY[bench])[task_id]}
    verdicts = grade_code_many(bench, [(program(bench, cheat), task_id) for cheat in CHEATS[bench]], tasks=tasks)
    return bench, dict(zip(CHEATS[bench], verdicts))


@pytest.fixture(scope="module")
def bigcodebench_verdicts():
    pytest.importorskip("bigcodebench", reason="bigcodebench not installed (pip install --no-deps bigcodebench==0.2.5)")
    pytest.importorskip("matplotlib", reason="matplotlib not installed (BigCodeBench needs it)")
    sandbox = Sandbox(dataclasses.replace(bigcodebench.LIMITS, timeout_s=60.0, cpu_s=60))
    bigcodebench.check_environment(sandbox)
    pairs = [(program("bigcodebench", cheat), BCB_TASK["task_id"]) for cheat in cheats("bigcodebench")]
    gold = (bigcodebench.gold_program(BCB_TASK), BCB_TASK["task_id"])  # the task is gradable: its solution passes
    verdicts = grade_code_many("bigcodebench", pairs + [gold], tasks={BCB_TASK["task_id"]: BCB_TASK}, workers=2,
                               sandbox=sandbox)  # fmt: skip
    return dict(zip(cheats("bigcodebench") + ["gold"], verdicts))


@pytest.mark.parametrize("cheat", cheats("livecodebench"))
def test_livecodebench_functional_forgery_fails(livecodebench_verdicts, cheat):
    assert livecodebench_verdicts[cheat] == (False, FUNCTIONAL_REASONS[cheat])


@pytest.mark.parametrize("cheat", cheats("code_tests"))
def test_code_tests_functional_forgery_fails(code_tests_verdicts, cheat):
    assert code_tests_verdicts[cheat] == (False, FUNCTIONAL_REASONS[cheat])


@pytest.mark.parametrize("cheat", list(EVALPLUS_REASONS))
def test_evalplus_forgery_fails(evalplus_verdicts, cheat):
    bench, verdicts = evalplus_verdicts
    assert verdicts[cheat] == (False, EVALPLUS_REASONS[cheat]), bench


@pytest.mark.parametrize("cheat", cheats("bigcodebench"))
def test_bigcodebench_forgery_detected(bigcodebench_verdicts, cheat):
    assert bigcodebench_verdicts["gold"] == (True, "bigcodebench_pass")
    assert bigcodebench_verdicts[cheat] == (False, BIGCODEBENCH_REASONS[cheat])
