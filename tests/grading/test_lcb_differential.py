"""Differential: the same stdin programs on the same tests, graded by LiveCodeBench's own harness
(``check_correctness`` of nvidia-livecodebench: its ``testing_util.run_test`` in a fresh process per
program, in a subprocess here) and by ours (``livecodebench.grade_one`` in our sandbox). Every
disagreement is listed in ``KNOWN_DIFFERENCES`` with its cause (docs/code_eval.md, "LiveCodeBench:
our harness against its own").

The programs are written here, so where bubblewrap cannot run (and ``CI`` is not ``true``) ours run in
the sandbox's unsandboxed mode (``own_programs_sandbox``, tests/grading/conftest.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fpa.grading.code import livecodebench

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "lcb" / "test6_fixture.jsonl"
HUGE_N = 20_000  # 2**HUGE_N has 6,021 digits: past Python's default int-string limit, within LCB's 50,000

# LiveCodeBench's harness as its evaluation runs it: check_correctness (run_test in a fresh process with
# a global timeout) per program, and a program passes when every test result is > 0 (pass_k_utils).
LCB_DRIVER = r"""
import json, sys
from livecodebench.evaluation.compute_code_generation_metrics import check_correctness
from livecodebench.evaluation.pass_k_utils import extract_instance_results
cases = json.load(open(sys.argv[1]))
results = {index: [check_correctness({"input_output": json.dumps(case["in_outs"])}, case["code"], timeout=6,
                                     debug=False)[0]] for index, case in enumerate(cases)}
passed = extract_instance_results(results)
json.dump([bool(passed[index][0]) for index in range(len(cases))], open(sys.argv[2], "w"))
"""

SUM = "a, b = map(int, input().split())\n"
HALVES = "n = int(input())\nxs = [int(input()) for _ in range(n)]\n"
POWER = "n = int(input())\n"
# name: (problem, program, LiveCodeBench's verdict worked out by hand)
PROGRAMS = {
    "sum correct": ("fx_stdin_sum", SUM + "print(a + b)\n", True),
    "sum off by one": ("fx_stdin_sum", SUM + "print(a + b + 1)\n", False),
    "sum as float": ("fx_stdin_sum", SUM + "print(float(a + b))\n", True),  # 3.0 = 3 as decimals
    "sum in e-notation": ("fx_stdin_sum", SUM + "print(f'{a + b:.6e}')\n", True),  # 3.000000e+00
    "sum plus 1e-21": ("fx_stdin_sum", SUM + "print(f'{a + b}.000000000000000000001')\n", False),  # float-equal
    "sum zero padded": ("fx_stdin_sum", SUM + "print('+0' + str(a + b))\n", True),
    "sum, tabs and CRLF": ("fx_stdin_sum", SUM + "print(' ', a + b, ' ', sep='\\t', end='\\r\\n\\n')\n", True),
    "sum, blank line first": ("fx_stdin_sum", SUM + "print()\nprint(a + b)\n", True),
    "sum and a second token": ("fx_stdin_sum", SUM + "print(a + b, 0)\n", False),
    "sum via open(0)": ("fx_stdin_sum", "a, b = map(int, open(0).read().split())\nprint(a + b)\n",
                        False),  # io.open, not the patched builtins.open: reads the harness's own (empty) stdin
    "sum via sys.stdin.buffer": ("fx_stdin_sum", "import sys\na, b = map(int, sys.stdin.buffer.read().split())\n"
                                 "print(a + b)\n", False),  # a StringIO has no .buffer
    "halves correct": ("fx_stdin_float", HALVES + "for x in xs:\n    print(x / 2)\n", True),
    "halves, 10 decimals": ("fx_stdin_float", HALVES + "for x in xs:\n    print(f'{x / 2:.10f}')\n", True),
    "halves rounded": ("fx_stdin_float", HALVES + "for x in xs:\n    print(round(x / 2))\n", False),
    "halves, decimal comma": ("fx_stdin_float", HALVES + "for x in xs:\n    print(str(x / 2).replace('.', ','))\n",
                              False),
    "halves on one line": ("fx_stdin_float", HALVES + "print(*[x / 2 for x in xs])\n", False),
    "halves, CR line ends": ("fx_stdin_float", HALVES + "import sys\nfor x in xs:\n    sys.stdout.write(f'{x / 2}\\r')\n",
                             False),  # one line, split at "\n" only
    "power correct": ("power_of_two", POWER + "print(2 ** n)\n", True),
    "power as float": ("power_of_two", POWER + "print(float(2 ** n))\n", False),  # 1.8446744073709552e+19
    "power plus one": ("power_of_two", POWER + "print(2 ** n + 1)\n", False),
    "power, 6,021 digits": ("huge_power", POWER + "print(2 ** n)\n", True),
}
# (program: (ours, LiveCodeBench's)): each explained in docs/code_eval.md
KNOWN_DIFFERENCES = {
    "sum via open(0)": (True, False),  # LCB's header binds open to io.open; its patched builtins.open is not used
    "sum via sys.stdin.buffer": (True, False),  # LCB patches sys.stdin with a StringIO; ours is a real stdin
}


# found, not imported: importing LiveCodeBench's evaluation package raises this process's int-string limit
pytestmark = pytest.mark.skipif(importlib.util.find_spec("livecodebench") is None,
                                reason="nvidia-livecodebench not installed (.ci/run installs it with --no-deps)")


def _digits(number: int) -> str:
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(number)
    finally:
        sys.set_int_max_str_digits(limit)


def _stdin_tests(pairs: list[tuple[str, str]]) -> list[dict]:
    return [{"input": given, "output": expected, "testtype": "stdin"} for given, expected in pairs]


@pytest.fixture(scope="module")
def problems(own_programs_sandbox):
    """Problem id -> its decoded tests: the fixture's stdin problems and two of big integers."""
    fixture = livecodebench.load_tasks(FIXTURE)
    tests = {name: livecodebench.all_tests(fixture[name], own_programs_sandbox)
             for name in ("fx_stdin_sum", "fx_stdin_float")}
    tests["power_of_two"] = _stdin_tests([(f"{n}\n", f"{2 ** n}\n") for n in (10, 64, 100)])
    tests["huge_power"] = _stdin_tests([(f"{HUGE_N}\n", _digits(2 ** HUGE_N) + "\n")])
    return tests


def lcb_verdicts(cases: list[dict], directory: Path) -> list[bool]:
    """LiveCodeBench's pass/fail per ``{"code", "in_outs"}``, from ``LCB_DRIVER`` in a subprocess."""
    (directory / "cases.json").write_text(json.dumps(cases))
    done = subprocess.run([sys.executable, "-c", LCB_DRIVER, str(directory / "cases.json"),
                           str(directory / "out.json")], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=300, cwd=directory)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads((directory / "out.json").read_text())


def test_our_harness_and_lcbs_agree_on_every_program_but_the_known(problems, own_programs_sandbox, tmp_path):
    cases = [{"code": code, "in_outs": {"inputs": [test["input"] for test in problems[problem]],
                                        "outputs": [test["output"] for test in problems[problem]], "fn_name": None}}
             for problem, code, _ in PROGRAMS.values()]
    theirs = dict(zip(PROGRAMS, lcb_verdicts(cases, tmp_path)))
    ours = {name: livecodebench.grade_one({"question_id": name}, code, own_programs_sandbox, tests=problems[problem])[0]
            for name, (problem, code, _) in PROGRAMS.items()}
    assert theirs == {name: verdict for name, (_, _, verdict) in PROGRAMS.items()}  # the harness ran as expected
    disagreements = {name: (ours[name], theirs[name]) for name in PROGRAMS if ours[name] != theirs[name]}
    print(f"\n{len(PROGRAMS)} programs; disagreements: {disagreements}")
    assert disagreements == KNOWN_DIFFERENCES
