"""The differential corpus: programs generated from the mirror's problems, not picked by hand.

Each family's problems come from the data mirror: MBPP+ and HumanEval+ tasks as they are; the
LiveCodeBench families (stdin, functional) and ``code_tests`` (the TACO/APPS reward, in LCB's test
format) as MBPP+ tasks turned into LCB problems: the task's base inputs as tests (one JSON argument
per line) and its canonical solution's outputs, computed in a subprocess (``probe``), as expected
outputs; BigCodeBench tasks as they are. Each problem gets its gold solution and a mutant per
mutation operator (``OPERATORS``: what it changes, and the outputs it applies to), plus the forged
programs of docs/code_eval.md (``tests/grading_code/forgeries.py``). A case is a dict:

    {"family", "problem", "operator", "completion": what our grader gets,
     "official": the program the official harness runs (its own extraction and assembly applied)}

The order within a problem is kept (``files``: a victim, the writer, a victim), since programs of one
task are graded together.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "grading_code"))
from forgeries import BIGCODEBENCH, EVALPLUS, FUNCTIONAL  # noqa: E402  the forged programs, one owner

FAMILIES = ("lcb_stdin", "lcb_functional", "code_tests", "mbppplus", "humanevalplus", "bigcodebench")
LCB_TESTS = 4  # tests per LCB problem: the task's first base inputs
SLOW_PROBLEMS = 2  # problems per family that get the slow operators (each costs over 6 s a side)

# Transforms of a returned value, defined in each mutant that uses one (applied at the top-level call only).
MUTATORS = '''
import collections as _fpa_collections
class _FpaFloat(float):
    pass
def _fpa_off_by_one(out):
    if isinstance(out, bool): return not out
    if isinstance(out, (int, float)): return out + 1
    if isinstance(out, str): return out + "x"
    if isinstance(out, (list, tuple)): return type(out)(list(out)[:-1]) if out else type(out)([0])
    if isinstance(out, dict): return {**out, "_fpa": 1}
    if isinstance(out, (set, frozenset)): return type(out)(set(out) | {"_fpa"})
    return 0 if out is None else None
def _fpa_wrong_type(out):
    if isinstance(out, bool): return int(out)
    if isinstance(out, (int, float)): return str(out)
    if isinstance(out, str): return list(out)
    if isinstance(out, list): return tuple(out)
    if isinstance(out, tuple): return list(out)
    if isinstance(out, (set, frozenset, dict)): return sorted(out, key=repr)
    return out
def _fpa_deep(n):
    return 0 if n == 0 else 1 + _fpa_deep(n - 1)
'''
WRAP = '''
_fpa_gold, _fpa_depth = {entry}, [0]
def {entry}(*args, **kwargs):
    _fpa_depth[0] += 1
    try:
        out = _fpa_gold(*args, **kwargs)
    finally:
        _fpa_depth[0] -= 1
    if _fpa_depth[0]:
        return out
{body}'''
# name: (applies to the gold output's type: None = any, the lines that end the wrapper)
RESULT_OPERATORS = {
    "off_by_one": (None, "    return _fpa_off_by_one(out)\n"),
    "wrong_type": (None, "    return _fpa_wrong_type(out)\n"),
    "tuple_for_list": ("list", "    return tuple(out)\n"),
    "nested_tuples": ("list", "    return [tuple(x) if isinstance(x, list) else x for x in out]\n"),
    "reordered_dict": ("dict", "    return dict(reversed(list(out.items())))\n"),
    "ordered_dict_reordered": ("dict", "    return _fpa_collections.OrderedDict(reversed(list(out.items())))\n"),
    "float_perturbed": ("float", "    return out + 1e-9\n"),
    "float_subclass_perturbed": ("float", "    return _FpaFloat(out + 1e-9)\n"),
    "extra_output": (None, "    print('debug', out)\n    return out\n"),
    "exit_in_function": (None, "    import sys\n    sys.exit(0)\n"),
    "deep_recursion": (None, "    _fpa_deep(3000)\n    return out\n"),
    "header_names": (None, "    _unused = (gcd(4, 6), inf, sqrt(4.0), Counter())\n    return out\n"),
}
PRELUDES = {  # a line before the program, and whether the official harness's process already has it
    "import_numpy": "import numpy as np\n",
    "import_pandas": "import pandas as pd\n",
    "import_stdlib": "import statistics, heapq, bisect, itertools\nfrom collections import defaultdict\n",
}
FENCES = {"fence_python3": "python3", "fence_py": "py", "fence_Python": "Python", "fence_bare": "",
          "fence_attributes": 'python title="solution.py"'}
WRITER = ("\nimport io as _fpa_io, sys as _fpa_sys\n_fpa_io.open((_fpa_sys.path[0] or '.') + '/colorsys.py', 'w')"
          ".write('raise ImportError(\"shadowed\")\\n')\n")
VICTIM = "import colorsys\n"


def fenced(code: str, language: str) -> str:
    return f"Here is the solution.\n\n```{language}\n{code.rstrip()}\n```\n\nIt runs in O(n)."


def mutants(code: str, entry: str, output_type: str) -> list[tuple[str, str]]:
    """``(operator, program)`` for a program ``code`` defining ``entry``, whose gold output is of ``output_type``."""
    found = [("gold", code)]
    for name, (applies, body) in RESULT_OPERATORS.items():
        if applies in (None, output_type):
            found.append((name, code + MUTATORS + WRAP.format(entry=entry, body=body)))
    found += [(name, prelude + code) for name, prelude in PRELUDES.items()]
    found.append(("exit_at_module_end", code + "\nimport sys\nsys.exit(0)\n"))
    found.append(("files_victim", VICTIM + code))
    found.append(("files_writer", code + WRITER))
    found.append(("files_victim", VICTIM + code))
    return found


def probe(tasks: dict[str, dict], n_inputs: int) -> dict[str, dict]:
    """Per task, in a subprocess (the canonical solutions run there, not here): the type of its first base
    output and, when its first ``n_inputs`` base inputs and outputs are plain JSON, those as LCB tests."""
    script = r'''
import json, sys
jobs = json.load(open(sys.argv[1]))
found = {}
for task_id, (code, entry, inputs) in jobs.items():
    namespace = {}
    try:
        exec(code, namespace)
        outputs = [namespace[entry](*json.loads(json.dumps(list(args)))) for args in inputs]
    except BaseException:
        continue
    plain = lambda value: list(value) if isinstance(value, tuple) else value
    tests = None
    try:
        texts = [json.dumps(plain(out)) for out in outputs]
        if all(json.loads(text) == plain(out) and isinstance(out, (int, float, str, list, tuple, bool)) for text, out in zip(texts, outputs)):
            tests = [{"input": "\n".join(json.dumps(arg) for arg in args), "output": text} for args, text in zip(inputs, texts)]
    except Exception:
        pass
    found[task_id] = {"type": type(outputs[0]).__name__ if outputs else "none", "tests": tests, "arity": len(inputs[0]) if inputs else 0}
print(json.dumps(found))
'''
    jobs = {}
    for task_id, task in tasks.items():
        try:
            inputs = json.loads(json.dumps([list(args) for args in task["base_input"][:n_inputs]]))
        except (TypeError, ValueError):
            continue
        jobs[task_id] = (task["prompt"] + task["canonical_solution"], task["entry_point"], inputs)
    with tempfile.TemporaryDirectory(prefix="corpus-probe-") as directory:
        (Path(directory) / "jobs.json").write_text(json.dumps(jobs))
        done = subprocess.run([sys.executable, "-c", script, "jobs.json"], cwd=directory, capture_output=True, text=True,
                              timeout=600, stdin=subprocess.DEVNULL)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


STDIN_MAIN = ("\nimport json as _fpa_json\n_fpa_args = [_fpa_json.loads(input()) for _ in range({arity})]\n"
              "{before}print(_fpa_json.dumps({entry}(*_fpa_args)))\n{after}")
STDIN_OPERATORS = {  # (before the answer is printed, after it)
    "exit_0_after_print": ("", "import sys\nsys.exit(0)\n"),
    "exit_1_after_print": ("", "import sys\nsys.exit(1)\n"),
    "exit_str_after_print": ("", "exit('done')\n"),
    "quit_after_print": ("", "quit()\n"),
    "os_exit_0_after_print": ("", "import os, sys\nsys.stdout.flush()\nos._exit(0)\n"),
    "os_exit_1_after_print": ("", "import os, sys\nsys.stdout.flush()\nos._exit(1)\n"),
    "exit_0_before_print": ("import sys\nsys.exit(0)\n", ""),
    "extra_line": ("", "print('done')\n"),
    "stdout_buffer": ("", "import sys\nsys.stdout.buffer.write(b'')\n"),
}


def stdin_program(code: str, entry: str, arity: int, before: str = "", after: str = "") -> str:
    return code + STDIN_MAIN.format(arity=arity, entry=entry, before=before, after=after)


def lcb_problems(tasks: dict[str, dict], probes: dict[str, dict], count: int) -> list[tuple[str, dict, dict]]:
    """``(task_id, task, probe)`` of the first ``count`` MBPP+ tasks whose tests are plain JSON."""
    found = [(task_id, task, probes[task_id]) for task_id, task in tasks.items()
             if probes.get(task_id, {}).get("tests") and probes[task_id]["arity"] > 0]
    return found[:count]


def lcb_stdin_cases(problems, family: str = "lcb_stdin") -> list[dict]:
    cases = []
    for index, (task_id, task, found) in enumerate(problems):
        code, entry, arity = task["canonical_solution"], task["entry_point"], found["arity"]
        programs = [(name, stdin_program(program, entry, arity)) for name, program in mutants(code, entry, found["type"])]
        programs += [(name, stdin_program(code, entry, arity, before, after)) for name, (before, after) in STDIN_OPERATORS.items()]
        main = stdin_program("", entry, arity)
        programs.append(("main_guard", code + "\ndef main():\n" + "".join(f"    {line}\n" for line in main.strip().splitlines())
                         + "\nif __name__ == '__main__':\n    main()\n"))
        programs.append(("global_in_helper", code + "\n_fpa_calls = 0\ndef _fpa_count():\n    global _fpa_calls\n"
                         "    _fpa_calls += 1\n_fpa_count()\n" + main))
        programs += [(name, fenced(stdin_program(code, entry, arity), language)) for name, language in FENCES.items()]
        if index < SLOW_PROBLEMS:
            first = json.loads("[" + ", ".join(found["tests"][0]["input"].split("\n")) + "]")
            programs.append(("slow_one_test", stdin_program(code, entry, arity, f"import time\nif _fpa_args == {first!r}:\n"
                                                            "    time.sleep(7)\n")))
        tests = [{**test, "testtype": "stdin"} for test in found["tests"]]
        cases += [{"family": family, "problem": f"{task_id}", "operator": name, "completion": program,
                   "tests": tests, "func_name": None} for name, program in programs]
    return cases


def solution_class(entry: str) -> str:
    return f"\nclass Solution:\n    def {entry}(self, *args):\n        return {entry}(*args)\n"


def lcb_functional_cases(problems, family: str = "lcb_functional", style: str = "lcb") -> list[dict]:
    cases = []
    for index, (task_id, task, found) in enumerate(problems):
        code, entry = task["canonical_solution"], task["entry_point"]
        wrap = solution_class(entry) if style == "lcb" else ""
        programs = [(name, program + wrap) for name, program in mutants(code, entry, found["type"])]
        programs += [(name, fenced(code + wrap, language)) for name, language in FENCES.items()]
        if style == "lcb":
            programs.append(("top_level_function", code))
        programs += [(f"forged_{cheat}", prelude + "class Solution:\n    def {name}(self, *args):\n{body}".format(
            name=entry, body=body)) for cheat, (prelude, body) in FUNCTIONAL.items()]
        tests = [{**test, "testtype": "functional"} for test in found["tests"]]
        if index < SLOW_PROBLEMS:
            first = json.loads("[" + ", ".join(tests[0]["input"].split("\n")) + "]")
            slow = f"    import time\n    if list(args) == {first!r}:\n        time.sleep(7)\n    return out\n"
            programs.append(("slow_one_test", code + WRAP.format(entry=entry, body=slow) + wrap))
        cases += [{"family": family, "problem": task_id, "operator": name, "completion": program, "tests": tests,
                   "func_name": entry} for name, program in programs]
        if index == 0:  # an expected output past Python's default int-string limit (LCB's process: 50,000 digits)
            big = "def power_plus_one(n):\n    return 10 ** n + 1\n"
            cases.append({"family": family, "problem": "int_5001_digits", "operator": "int_5001_digits",
                          "completion": big + (solution_class("power_plus_one") if style == "lcb" else ""),
                          "tests": [{"input": "5000", "output": "1" + "0" * 4999 + "1", "testtype": "functional"}],
                          "func_name": "power_plus_one"})
        if index < SLOW_PROBLEMS:  # 24 tests of about half a second of CPU each: within 6 s each, 12 s in all
            busy = "import time\n_t = time.process_time()\nwhile time.process_time() - _t < 0.5:\n    pass\nreturn out\n"
            program = code + WRAP.format(entry=entry, body="".join(f"    {line}\n" for line in busy.splitlines())) + wrap
            cases.append({"family": family, "problem": f"{task_id} x24", "operator": "slow_every_test",
                          "completion": program, "tests": (tests * 24)[:24], "func_name": entry})
    return cases


def code_tests_cases(problems) -> list[dict]:
    """Half the problems as stdin specs, half as functional ones (a top-level function, as APPS's)."""
    half = len(problems) // 2
    cases = lcb_stdin_cases(problems[:half], "code_tests") + lcb_functional_cases(problems[half:], "code_tests", "apps")
    return [case for case in cases if case["operator"] != "slow_every_test"]


def evalplus_cases(bench: str, tasks: dict[str, dict], probes: dict[str, dict]) -> list[dict]:
    """MBPP+ completions are whole programs; a HumanEval+ one continues the prompt or is whole."""
    cases = []
    for task_id, task in tasks.items():
        entry = task["entry_point"]
        whole = task["canonical_solution"] if bench == "mbppplus" else task["prompt"] + task["canonical_solution"]
        programs = [(name, program, program) for name, program in mutants(whole, entry, probes.get(task_id, {}).get("type"))]
        programs += [(name, fenced(whole, language), whole) for name, language in FENCES.items()]
        programs += [(f"forged_{cheat}", prelude + f"def {entry}(*args):\n{body}", prelude + f"def {entry}(*args):\n{body}")
                     for cheat, (prelude, body) in EVALPLUS.items()]
        if bench == "humanevalplus":  # a continuation of the prompt, with a helper named after the entry point
            body = task["canonical_solution"] + f"\n\ndef {entry}_helper(values):\n    return values\n"
            programs.append(("helper_named_after_entry", body, task["prompt"] + body))
            programs.append(("gold_continuation", task["canonical_solution"], task["prompt"] + task["canonical_solution"]))
        cases += [{"family": bench, "problem": task_id, "operator": name, "completion": completion, "official": official}
                  for name, completion, official in programs]
    return cases


def bigcodebench_cases(tasks: dict[str, dict]) -> list[dict]:
    cases = []
    for task_id, task in tasks.items():
        body, whole = task["canonical_solution"], task["code_prompt"] + task["canonical_solution"]
        programs = [("gold", body), ("gold_whole", whole),
                    ("helper_named_after_entry", body + "\n\ndef task_func_helper():\n    return None\n"),
                    ("exit_at_module_end", whole + "\nimport sys\nsys.exit(0)\n"), ("import_pandas", "import pandas\n" + whole)]
        programs += [(name, fenced(whole, language)) for name, language in FENCES.items()]
        programs += [(f"forged_{cheat}", program.replace("def task_func(a, b):", "def task_func(*args, **kwargs):"))
                     for cheat, program in BIGCODEBENCH.items()]
        cases += [{"family": "bigcodebench", "problem": task_id, "operator": name, "completion": completion}
                  for name, completion in programs]
    return cases
