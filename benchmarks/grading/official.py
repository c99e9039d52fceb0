"""The official harnesses' verdicts on the corpus, each run as its users run it: in a subprocess of its own
(never in this process: they run the candidate code), from a script file in a fresh temporary directory.

- LiveCodeBench (and ``code_tests``, whose problems are in LCB's format): nvidia-livecodebench's
  ``check_correctness`` (``run_test`` in a fresh process per program, a global timeout), timeout 6 s;
  a program passes when every test result is > 0 (``pass_k_utils.extract_instance_results``). The program is
  its ``extract_code`` of the completion (a chat model's: the lines between the last two fences).
- MBPP+ / HumanEval+: evalplus 0.3.1 as ``evalplus.evaluate`` does it: expected outputs and reference times
  by ``trusted_exec`` (``get_groundtruth``), then ``untrusted_check`` on base and plus with ``fast_check``
  (``check_correctness``); pass = both pass. ``evalplus.evaluate`` itself needs packages not installed here
  (termcolor, tree-sitter), so its two functions are re-stated; the process imports ``evalplus.data`` and
  ``evalplus.eval`` as it does, so the candidates fork from the same process state.
- BigCodeBench: bigcodebench 0.2.5's ``untrusted_check`` with ``evaluate``'s defaults (30 GiB address
  space and data, 10 MiB stack, ``min_time_limit`` 1, the 240 s ``TIMEOUT_LIMIT``) on the calibrated program
  ``code_prompt + "\\n    pass\\n" + solution``.

Between problems the driver removes what a program left in its own directory (the corpus's ``files``
writer), as a fresh evaluation run would start without it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

_COMMON = r'''
import json, os, sys
cases = json.load(open(sys.argv[1]))
verdicts = []
def finish(verdicts):  # and exit now: a program's thread or the harness's manager must not hold the exit
    with open(sys.argv[2], "w") as handle:
        json.dump(verdicts, handle)
    sys.stdout.flush()
    os._exit(0)
def tidy():
    for name in os.listdir(sys.path[0]):
        if name.endswith(".py") and name != os.path.basename(__file__):
            os.remove(os.path.join(sys.path[0], name))
'''
LCB = _COMMON + r'''
from livecodebench.evaluation.compute_code_generation_metrics import check_correctness
for case in cases:
    tests = case["tests"]
    sample = {"input_output": json.dumps({"inputs": [t["input"] for t in tests], "outputs": [t["output"] for t in tests],
                                          "fn_name": case["func_name"]})}
    try:  # as evaluate_generations_by_problem: a harness exception leaves the result [-2]
        results, _ = check_correctness(sample, case["official"], timeout=6, debug=False)
    except Exception:
        results = [-2]
    verdicts.append(all(result > 0 for result in results))  # pass_k_utils.extract_instance_results
    if case.get("last_of_problem"):
        tidy()
finish(verdicts)
'''
EVALPLUS = _COMMON + r'''
import evalplus.data, evalplus.eval
from evalplus.data.mbpp import get_mbpp_plus
from evalplus.data.humaneval import get_human_eval_plus
import evalplus.data.mbpp as mbpp, evalplus.data.humaneval as humaneval
from evalplus.eval import PASS, untrusted_check
from evalplus.eval._special_oracle import MBPP_OUTPUT_NOT_NONE_TASKS
from evalplus.gen.util import trusted_exec
bench, data = sys.argv[3], sys.argv[4]
if bench == "mbppplus":
    mbpp.MBPP_OVERRIDE_PATH = data
    problems, dataset = get_mbpp_plus(err_incomplete=True), "mbpp"
else:
    humaneval.HUMANEVAL_OVERRIDE_PATH = data
    problems, dataset = get_human_eval_plus(err_incomplete=True), "humaneval"
truth = {}
for case in cases:
    problem = problems[case["problem"]]
    if case["problem"] not in truth:  # get_groundtruth
        not_none = problem["entry_point"] in MBPP_OUTPUT_NOT_NONE_TASKS
        truth[case["problem"]] = {split: trusted_exec(problem["prompt"] + problem["canonical_solution"], problem[f"{split}_input"],
                                                      problem["entry_point"], record_time=True, output_not_none=not_none)
                                  for split in ("base", "plus")}
    status = []
    for split in ("base", "plus"):  # check_correctness
        expected, ref_time = truth[case["problem"]][split]
        status.append(untrusted_check(dataset, case["official"], problem[f"{split}_input"], problem["entry_point"],
                                      expected=expected, atol=problem["atol"], ref_time=ref_time, fast_check=True)[0])
    verdicts.append(status == [PASS, PASS])
    if case.get("last_of_problem"):
        tidy()
finish(verdicts)
'''
BIGCODEBENCH = _COMMON + r'''
from bigcodebench.eval import PASS, untrusted_check
for case in cases:
    status, _ = untrusted_check(case["official"], case["test"], case["entry_point"], 30 * 1024, 30 * 1024, 10,
                                min_time_limit=1, gt_time_limit=1)
    verdicts.append(status == PASS)
    if case.get("last_of_problem"):
        tidy()
finish(verdicts)
'''
DRIVERS = {"lcb_stdin": LCB, "lcb_functional": LCB, "code_tests": LCB, "mbppplus": EVALPLUS, "humanevalplus": EVALPLUS,
           "bigcodebench": BIGCODEBENCH}


def extracted(completion: str) -> str:
    """The code an official pipeline takes from a completion: LiveCodeBench's ``extract_code`` for a chat
    model (the lines between the last two lines holding a fence), the whole text where there is no pair."""
    from livecodebench.lm_styles import LMStyle
    from livecodebench.utils.extraction_utils import extract_code

    fences = sum("```" in line for line in completion.split("\n"))
    return extract_code(completion, LMStyle.OpenAIChat) if fences >= 2 else completion


def verdicts(family: str, cases: list[dict], data: Path | None = None, timeout_s: int = 7200) -> list[bool]:
    """The official harness's pass/fail per case of one family, in order (``data``: EvalPlus's task file)."""
    with tempfile.TemporaryDirectory(prefix=f"official-{family}-") as directory:
        work = Path(directory)
        (work / "driver.py").write_text(DRIVERS[family])
        (work / "cases.json").write_text(json.dumps(cases))
        extra = [family, str(data)] if family in ("mbppplus", "humanevalplus") else []
        with open(work / "log.txt", "w") as log:  # a file, not a pipe: a process a program left must not hold it
            driver = subprocess.Popen([sys.executable, "driver.py", str(work / "cases.json"), str(work / "out.json"),
                                       *extra], cwd=work, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                      start_new_session=True)  # fmt: skip
            try:
                returncode = driver.wait(timeout_s)
            finally:
                try:  # whatever the driver's programs left behind
                    os.killpg(driver.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if returncode != 0:
            raise RuntimeError(f"official {family} driver failed: {(work / 'log.txt').read_text()[-2000:]}")
        return json.loads((work / "out.json").read_text())
