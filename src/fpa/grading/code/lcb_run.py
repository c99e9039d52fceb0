"""LiveCodeBench's ``testing_util`` as the program's own process runs it, re-stated for our sandbox.

The two scripts here run inside the sandbox. They do what nvidia-livecodebench 26.3's ``run_test``
does around the program, rule for rule, except that the verdict is not decided there:

- ``IMPORT_STRING`` is LCB's import header, verbatim (``testing_util.import_string``: ``from math
  import *``, ``string``, ``re``, ..., ``sys.setrecursionlimit(50000)``); the process raises
  Python's int-string limit to 50,000 digits, as ``compute_code_generation_metrics`` does on import;
  ``GUARD`` is ``testing_util.reliability_guard()`` (no memory limit, as ``run_test`` calls it):
  ``quit``, ``os.getcwd``, ``subprocess.Popen``, ... are None for the program, as there. Numpy, which
  LCB's process has imported before the guard (``testing_util`` imports it), is imported first for a
  program that imports anything outside the standard library (``PROCESS_MODULES``): under the guard
  (``os.putenv`` None) its own import fails.
- ``STDIN``: ``clean_if_name`` and ``make_function`` (every statement but the imports becomes
  the body of ``wrapped_function``), compiled in a module ``tmp_sol`` under the time limit, then, for
  each test in turn in this one process (``run_test``'s loop), ``wrapped_function()`` under the time
  limit with a ``SystemExit`` caught (``call_method``): what it printed before is the test's output.
  Each test's input is a real file on fd 0 (``sys.stdin`` reopened on it) and its output a file on fd 1;
  one record per test, ``["output", text]``, ``["timeout"]`` or ``["raised", type]``, the first
  timeout or error ending the run, as in LCB.
- ``FUNCTIONAL``: ``grade_call_based``: the header and the program in a module, ``Solution()``
  when the program's text holds ``class Solution`` (LCB's own test), else the module; each input
  one JSON value per line; each call with a time limit of its own; a returned tuple becomes a list
  (the top level only). Each result goes back as data, one record per input (``["value", v]``,
  ``["opaque", type]``, ``["timeout"]`` or ``["raised", type]``), and the host compares.

The time limit is a wall-clock timer per step, as LCB's ``signal.alarm(timeout)``.
"""

from __future__ import annotations

from fpa.grading.code.encoder import ENCODER

# testing_util.import_string of nvidia-livecodebench 26.3, verbatim
# (tests/grading/test_differential_sample.py::test_the_import_header_is_livecodebenchs compares it with the package's).
IMPORT_STRING = (
    "from string import *\nfrom re import *\nfrom datetime import *\nfrom collections import *\nfrom heapq import *\n"
    "from bisect import *\nfrom copy import *\nfrom math import *\nfrom random import *\nfrom statistics import *\n"
    "from itertools import *\nfrom functools import *\nfrom operator import *\nfrom io import *\nfrom sys import *\n"
    "from json import *\nfrom builtins import *\nfrom typing import *\nimport string\nimport re\nimport datetime\n"
    "import collections\nimport heapq\nimport bisect\nimport copy\nimport math\nimport random\nimport statistics\n"
    "import itertools\nimport functools\nimport operator\nimport io\nimport sys\nimport json\n"
    "sys.setrecursionlimit(50000)\n"
)
PROCESS_MODULES = ("numpy",)

_COMMON = r'''
import ast as _ast, json as _json, os as _os, signal as _signal, sys as _sys, types as _types
_sys.set_int_max_str_digits(50000)  # LCB's evaluating process (compute_code_generation_metrics)
IMPORT_STRING = %r

class TimeoutException(Exception):
    pass

def _alarm(signum, frame):
    raise TimeoutException

_signal.signal(_signal.SIGALRM, _alarm)
LIMIT = float(_sys.argv[1])

def timer(seconds):
    _signal.setitimer(_signal.ITIMER_REAL, seconds)

def preload(names):  # what LCB's evaluating process has imported (numpy), for a program that imports a library
    for name in names:
        __import__(name)

def guard():  # testing_util.reliability_guard(), maximum_memory_bytes=None
    import builtins, shutil, subprocess
    builtins.quit = None
    _os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
                 "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
                 "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir"):
        setattr(_os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    builtins.help = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        _sys.modules[name] = None

def compile_module(code):  # testing_util.compile_code's exec, under the time limit
    timer(LIMIT)
    try:
        module = _types.ModuleType("tmp_sol", "")
        exec(code, module.__dict__)
        return module
    finally:
        timer(0)

_channel, _write = _os.dup(1), _os.write  # the records' own fd: fd 1 becomes the program's

def send(line):  # one record, whole, on the records' fd
    data = memoryview((line + "\n").encode())
    while data:
        data = data[_write(_channel, data):]

def failure(error):  # the record of a step that raised: LCB's timeout, or any other error
    return ["timeout"] if "timeoutexception" in repr(error).lower() else ["raised", type(error).__name__]
''' % IMPORT_STRING

# testing_util.clean_if_name and make_function, then call_method: a SystemExit ends the program, not the test.
STDIN = _COMMON + r'''
def clean_if_name(code):
    try:
        tree = _ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, _ast.If) and _ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = _ast.unparse(tree.body[:-1]) + "\n" + _ast.unparse(last.body)
    except:
        pass
    return code

def make_function(code):
    try:
        tree = _ast.parse(code)
        imports = [stmt for stmt in tree.body if isinstance(stmt, (_ast.Import, _ast.ImportFrom))]
        others = [stmt for stmt in tree.body if not isinstance(stmt, (_ast.Import, _ast.ImportFrom))]
        function = _ast.FunctionDef(name="wrapped_function", args=_ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                    kw_defaults=[], defaults=[]), body=others, decorator_list=[], lineno=-1)
        return IMPORT_STRING + "\n" + _ast.unparse(imports) + "\n" + _ast.unparse(function)
    except Exception:
        return code

_job = _json.loads(_sys.stdin.read())
with open("program.py", encoding="utf-8") as _handle:
    _code = make_function(clean_if_name(_handle.read()))
_io_open, _open, _dup2, _read, _lseek, _ftruncate = open, _os.open, _os.dup2, _os.read, _os.lseek, _os.ftruncate
# fd 0 and fd 1 are each test's input and output file in turn, in the run's own work dir
_in = _open("test-stdin", _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC, 0o600)
_out = _open("test-stdout", _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC, 0o600)

def _refill(fd, data):
    _ftruncate(fd, 0)
    _lseek(fd, 0, 0)
    while data:
        data = data[_write(fd, data):]
    _lseek(fd, 0, 0)

def _flush():
    for stream in {id(_sys.stdout): _sys.stdout, id(_sys.__stdout__): _sys.__stdout__}.values():
        try:
            stream.flush()
        except Exception:
            pass

def _output():
    _flush()
    _lseek(_out, 0, 0)
    chunks = []
    while chunk := _read(_out, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")

preload(_job["preload"])
guard()
try:
    _method = getattr(compile_module(_code), "wrapped_function")
except Exception as _error:
    send(_json.dumps(["raised", type(_error).__name__]))
    raise
for _input in _job["inputs"]:  # call_method per test, in this one process, as LCB's run_test
    _refill(_in, _input.encode())
    _dup2(_in, 0)
    _refill(_out, b"")
    _dup2(_out, 1)
    _sys.stdin = _sys.__stdin__ = _io_open(0, "r", encoding="utf-8", closefd=False)
    timer(LIMIT)
    try:
        try:
            _method()
        except SystemExit:
            pass
        timer(0)
    except Exception as _error:
        timer(0)
        send(_json.dumps(failure(_error)))
        break
    send(_json.dumps(["output", _output()]))
_os._exit(0)
'''

# testing_util.grade_call_based; one record per input, in order. The program's own prints go to stderr.
FUNCTIONAL = ENCODER + _COMMON + r'''
func_name = _sys.argv[2]
job = _json.loads(_sys.stdin.read())
_os.dup2(2, 1)

with open("program.py", encoding="utf-8") as _handle:
    code = IMPORT_STRING + "\n\n" + _handle.read()
preload(job["preload"])
guard()
try:
    module = compile_module(code)
    solution = module.Solution() if "class Solution" in code else module
    method = getattr(solution, func_name)
    inputs = [[_json.loads(arg) for arg in line.split("\n")] for line in job["inputs"]]
except Exception as error:
    send(_dumps(["raised", type(error).__name__]))
    raise SystemExit(1)
for args in inputs:
    timer(LIMIT)
    try:
        value = method(*args)
        timer(0)
    except Exception as error:
        timer(0)
        send(_dumps(failure(error)))
        break
    if isinstance(value, tuple):  # "don't penalize model if it produces tuples instead of lists"
        value = list(value)
    try:
        send('["value", ' + encode(value) + "]")
    except Unserializable as error:
        send(_dumps(["opaque", str(error)]))
'''
