"""Programs that forge a pass instead of solving the task: the known ways to cheat the code graders.

Each was written against the harnesses of commit d0e18d6 (program, expected outputs and
verdict line in one sandbox process and directory), where each made the verdict a pass
on the benchmarks noted in docs/code_eval.md; the tests (``test_forgeries.py``) check that
none passes now; docs/code_eval.md has each one's verdict before and after. ``program(bench, cheat)`` gives the program for the task ``TASKS[bench]``.
"""

from __future__ import annotations

from fpa.sandbox.bwrap import WORKDIR

# (data file or mirror-relative tiny file, task id, entry point); the LCB fixture and TACO
# rows are in tests/fixtures, BigCodeBench's task is ``BCB_TASK`` below.
TASKS = {
    "livecodebench": ("fx_func_twosum", "twoSum"),
    "code_tests": ("taco_train/2", "maxOf"),
    "mbppplus": ("Mbpp/4", "heap_queue_largest"),
    "humanevalplus": ("HumanEval/5", "intersperse"),
    "bigcodebench": ("fpa/forgery", "task_func"),
}
BCB_TASK = {
    "task_id": "fpa/forgery", "entry_point": "task_func", "code_prompt": "def task_func(a, b):\n",
    "canonical_solution": "    return a * b\n",
    "test": "import unittest\nclass TestCases(unittest.TestCase):\n"
            "    def test_product(self):\n        expected = 42\n        self.assertEqual(task_func(6, 7), expected)\n"
            "    def test_zero(self):\n        expected = 0\n        self.assertEqual(task_func(0, 7), expected)\n",
}  # fmt: skip

ALWAYS_EQUAL = "class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n"
# The method each functional cheat defines: LCB's class Solution; code_tests takes a class too.
METHOD = "class Solution:\n    def {name}(self, *args):\n{body}"
FUNCTION = "def {name}(*args):\n{body}"

FUNCTIONAL = {  # LiveCodeBench's and code_tests' FUNCTIONAL harness: tests.json beside the program
    "read_tests": ("import json\n_tests = json.load(open('tests.json'))\n_calls = []\n",
                   "        _calls.append(1)\n        return json.loads(_tests[len(_calls) - 1]['output'])\n"),
    "patch_json": ("import json\n_dumps = json.dumps\njson.dumps = lambda obj, *a, **k: _dumps({'failed': None}) "
                   "if isinstance(obj, dict) and 'failed' in obj else _dumps(obj, *a, **k)\n",
                   "        return [-1]\n"),
    "nonce_exit": ("import os, sys\nsys.__stdout__.write('\\n' + sys.argv[1] + '{\"failed\": null}\\n')\n"
                   "sys.__stdout__.flush()\nos._exit(0)\n", "        return None\n"),
    "eq_object": (ALWAYS_EQUAL, "        return AlwaysEqual()\n"),
    "frame_expected": ("import json, sys\n",
                       "        return json.loads(sys._getframe(1).f_globals['test']['output'])\n"),
}  # fmt: skip

EVALPLUS = {  # EvalPlus: task.pkl (with the canonical solution) beside the program; untrusted_check compares
    "read_tests": (f"import io, pickle\n_dataset, _task = pickle.load(io.open('{WORKDIR}/task.pkl', 'rb'))\n_gold = {{}}\n"
                   "exec(_task['prompt'] + _task['canonical_solution'], _gold)\n",
                   "    return _gold[_task['entry_point']](*args)\n"),
    "patch_json": ("import json\njson.dumps = lambda *a, **k: '[{\"base\": \"pass\", \"plus\": \"pass\"}]'\n",
                   "    return None\n"),
    "nonce_exit": ("import os, sys\nnonce = sys.argv[1] if len(sys.argv) > 1 else ''\n"
                   "os.write(1, ('\\n' + nonce + '[{\"base\": \"pass\", \"plus\": \"pass\"}]\\n').encode())\n"
                   "os._exit(0)\n", "    return None\n"),
    "eq_object": (ALWAYS_EQUAL, "    return AlwaysEqual()\n"),
    "frame_expected": ("import sys\n", "    caller = sys._getframe(1).f_locals\n"
                       "    return caller['expected'][caller['i']]\n"),
}  # fmt: skip

BIGCODEBENCH = {  # BigCodeBench: solution.py and test_code.py in the work dir, one process with the tests
    "read_tests": f"import re\n_expected = [int(x) for x in re.findall(r'expected = (\\d+)', "
                  f"open('{WORKDIR}/test_code.py').read())]\n_calls = []\ndef task_func(a, b):\n"
                  "    _calls.append(1)\n    return _expected[len(_calls) - 1]\n",
    "patch_json": "import json\n_dumps = json.dumps\njson.dumps = lambda obj, *a, **k: _dumps({'status': 'pass', "
                  "'failed': [], 'first': ''}) if isinstance(obj, dict) and 'status' in obj else _dumps(obj, *a, **k)\n"
                  "def task_func(a, b):\n    return None\n",
    "nonce_exit": "import os, sys\nnonce = sys.argv[1] if len(sys.argv) > 1 else ''\n"
                  "os.write(1, ('\\n' + nonce + '{\"status\": \"pass\", \"failed\": [], \"first\": \"\"}\\n').encode())\n"
                  "os._exit(0)\ndef task_func(a, b):\n    return None\n",
    "eq_object": ALWAYS_EQUAL + "def task_func(a, b):\n    return AlwaysEqual()\n",
    "frame_expected": "import sys\ndef task_func(a, b):\n    return sys._getframe(1).f_locals['expected']\n",
    "patch_unittest": "import unittest\nunittest.TestCase.assertEqual = lambda self, first, second, msg=None: None\n"
                      "def task_func(a, b):\n    return None\n",
    "skip_tests": "import unittest\nunittest.TestCase.run = lambda self, result=None: result\n"
                  "def task_func(a, b):\n    return None\n",
    "raise_skip": "import unittest\ndef task_func(a, b):\n    raise unittest.SkipTest('skipped')\n",
    "replace_unittest": "import sys, types\nclass _Case:\n    def __init__(self, methodName='runTest'):\n"
                        "        self._name = methodName\n    def id(self):\n        return '__test__.TestCases.' + self._name\n"
                        "    def __call__(self, result=None):\n        result.addSuccess(self)\n"
                        "_fake = types.ModuleType('unittest')\n_fake.TestCase = _Case\nsys.modules['unittest'] = _fake\n"
                        "def task_func(a, b):\n    return None\n",
    "build_class": "import builtins\n_build = builtins.__build_class__\ndef _forge(body, name, *bases, **kw):\n"
                   "    cls = _build(body, name, *bases, **kw)\n    if name == 'TestCases':\n"
                   "        builtins.__build_class__ = _build\n        for attr in list(vars(cls)):\n"
                   "            if attr.startswith('test'):\n                setattr(cls, attr, lambda self: None)\n"
                   "    return cls\nbuiltins.__build_class__ = _forge\ndef task_func(a, b):\n    return None\n",
}  # fmt: skip

DESCRIPTIONS = {
    "read_tests": "reads the expected outputs from the harness's files (`tests.json`, `task.pkl`, `test_code.py`)",
    "patch_json": "patches `json.dumps` so that the harness's verdict line says pass",
    "nonce_exit": "prints the run's verdict line with a pass (nonce from `sys.argv`), then `os._exit(0)`",
    "eq_object": "returns an object whose `__eq__` is always true",
    "frame_expected": "reads the expected value from its caller's frame",
    "patch_unittest": "replaces `unittest.TestCase.assertEqual` by a no-op",
    "skip_tests": "replaces `unittest.TestCase.run`, so that no test runs",
    "raise_skip": "raises `unittest.SkipTest`, so that each test is skipped",
    "replace_unittest": "puts a module of its own in `sys.modules['unittest']`, whose `TestCase` reports a success",
    "build_class": "patches `__build_class__` so that `TestCases`'s tests are no-ops, and puts it back once the class is built",
}
CHEATS = {"livecodebench": list(FUNCTIONAL), "code_tests": list(FUNCTIONAL), "mbppplus": list(EVALPLUS),
          "humanevalplus": list(EVALPLUS), "bigcodebench": list(BIGCODEBENCH)}  # fmt: skip
# What a program can still forge, because BigCodeBench runs its tests in the program's process.
RESIDUAL = {("bigcodebench", "eq_object"), ("bigcodebench", "frame_expected")}


def program(bench: str, cheat: str) -> str:
    """The forged program for ``TASKS[bench]``, as a completion (``extract_code`` keeps it whole)."""
    name = TASKS[bench][1]
    if bench == "bigcodebench":
        return BIGCODEBENCH[cheat]
    if bench in ("mbppplus", "humanevalplus"):
        prelude, body = EVALPLUS[cheat]
        return prelude + FUNCTION.format(name=name, body=body)
    prelude, body = FUNCTIONAL[cheat]
    return prelude + METHOD.format(name=name, body=body)
