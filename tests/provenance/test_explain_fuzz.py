"""``fpa explain`` fuzzed (issue 58): a chain's files mutated as a careless user or a killed job leaves them
(a record deleted, a file deleted, changed, or replaced by a copy of another without its record). The
property: explain of FPA's cell fails (exit 1) exactly when a file of that cell's own chain was mutated,
each problem in one line naming a file of the chain; another row's mutated evaluation is a note; never a
traceback."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from provenance.test_explain import _chain, _explain

#: FPA's cell's chain (the outside benchmark file is added per example: its path is the example's own)
FPA_CHAIN = ["results/eval/toy/fpa/42/mine.json", "results/eval/toy/fpa/43/mine.json",
             "results/train/toy/fpa/42/checkpoint", "results/models/toy/base", "results/benchmarks/file/mine.jsonl"]
OTHERS = ["results/eval/toy/offrl/42/mine.json", "results/eval/toy/offrl/43/mine.json",
          "results/train/toy/offrl/42/checkpoint"]
OUTSIDE = "mine.jsonl"
KINDS = ["delete_record", "delete_file", "change", "copy_without_record"]
MUTATIONS = st.lists(st.tuples(st.sampled_from(FPA_CHAIN + OTHERS + [OUTSIDE]), st.sampled_from(KINDS)), max_size=3)


def _mutate(path: str, kind: str) -> bool:
    """Do ``kind`` to ``path``; whether it changed anything explain can see."""
    record = Path(path + ".prov.json")
    if not Path(path).exists():
        return False
    if kind == "delete_record":
        if not record.exists():
            return False
        record.unlink()
    elif kind == "delete_file":
        os.remove(path)
    elif kind == "change":
        Path(path).write_text(Path(path).read_text() + " changed")
    else:  # another file of the chain copied over it, its record deleted
        shutil.copy("results/eval/toy/offrl/42/mine.json" if "offrl/42" not in path else FPA_CHAIN[0], path)
        record.unlink(missing_ok=True)
    return True


@settings(max_examples=20, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(MUTATIONS)
def test_explain_fails_exactly_when_the_cells_own_chain_is_broken(mutations):
    with tempfile.TemporaryDirectory() as directory, contextlib.chdir(directory):
        table, _ = _chain(Path(directory))
        outside = str(Path(directory) / OUTSIDE)
        mutated = {(outside if path == OUTSIDE else path) for path, kind in mutations if _mutate(path, kind)}
        code, out, err = _run(table)
    chain = {*FPA_CHAIN, outside}
    assert code == (1 if mutated & chain else 0), (mutations, out, err)
    problems = err.splitlines()[2:]
    assert all(line.startswith("  ") and line[2:].split(":")[0] in chain for line in problems), err
    notes = out[out.index("note: "):].split("\n\n")[0].splitlines()[1:] if "note: " in out else []
    assert {line.strip().split(":")[0] for line in notes} <= mutated - chain, out


def _run(table: str) -> tuple[int, str, str]:
    class Capture:  # capsys is a function-scoped fixture: one capture per example here
        def readouterr(self):
            return out.getvalue(), err.getvalue()

    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        return _explain(Capture(), table, "--row", "fpa", "--col", "mine")
