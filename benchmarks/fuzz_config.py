"""Fuzz the one judge of a config: ``fpa check-config`` and planning must accept the same configs and
refuse the others with the same single line, and never hang, crash or print a traceback (issue 34).

Configs are generated from the schema (workflow/schemas/config.schema.yaml) over the default config,
then mutated: wrong types, unknown and missing keys, non-string and duplicate keys, deep nests,
unicode names, huge numbers, empty parts, alias bombs. Each is judged twice, in process:

- as ``fpa check-config FILE`` (``fpa.cli.main``, its output captured);
- as ``snakemake --configfile FILE`` plans it: Snakemake's own loader and merge, then the
  Snakefile's call (``fpa.planning.judge``), and, for a few, by a real ``snakemake -n``.

    python benchmarks/fuzz_config.py --examples 2000 --snakemake 8   # writes results/fuzz_config.json

``tests/planning/test_fuzz_config.py`` runs the same property with a fixed budget in CI.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml
from hypothesis import Phase
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from fpa.config import ConfigError, load_schema  # noqa: E402
from fpa.io import write_json  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "fuzz_config.json"
BASE = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
SCHEMA = load_schema()
EXAMPLE_SECONDS = 20  # an example judged for longer hangs
#: no "explain" phase: it traces every line run, and a traced deep nest takes minutes to refuse
PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)
# what the YAML text of a value is replaced with after dumping (the dumper cannot write them)
DEEP, BIG = "__deep_{}__", "__big_{}__"

# --- values from the schema, and values that are not -------------------------------------------------
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # any unicode but lone surrogates
NAMES = st.one_of(st.sampled_from(["..", ".", "-x", ".hidden", "a/b", "a b", "é", "x" * 300, "", "0", "toy"]),
                  st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,8}", fullmatch=True), TEXT)
NUMBERS = st.one_of(st.integers(), st.integers(-2 ** 80, 2 ** 80), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from([0, -1, 1e308, -1e-308, 2 ** 63, 10 ** 300]),
                    st.integers(4000, 5000).map(BIG.format))
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, NAMES)
ANY = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                    st.dictionaries(NAMES, inner, max_size=3)), max_leaves=8)
#: the mappings whose keys become names (and path segments), and the top level
NAMED = [(), ("models",), ("methods",), ("benchmarks",), ("tables",)]
NON_STRING_KEYS = st.one_of(st.integers(-5, 5), st.booleans(), st.none(), st.floats(0, 2, allow_nan=False))


def from_schema(schema: dict, depth: int = 0) -> st.SearchStrategy:
    """Values of ``schema`` (its types, enums, bounds and properties), now and then any value at all."""
    if "$ref" in schema:
        return from_schema(SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]], depth)
    if "enum" in schema or "const" in schema:
        return st.sampled_from(schema.get("enum", [schema.get("const")]))
    if "oneOf" in schema:
        return st.one_of([from_schema(option, depth) for option in schema["oneOf"]])
    kinds = schema.get("type", ["object"] if "properties" in schema else [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    options = [_of_type(kind, schema, depth) for kind in kinds] or [ANY]
    return st.one_of(*options) if depth < 3 else st.one_of(*options, ANY)


def _of_type(kind: str, schema: dict, depth: int) -> st.SearchStrategy:
    if kind == "object":
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", {})
        values = from_schema(extra, depth + 1) if isinstance(extra, dict) and depth < 3 else ANY
        chosen = st.fixed_dictionaries({}, optional={key: from_schema(sub, depth + 1) for key, sub in props.items()}) \
            if props and depth < 3 else st.dictionaries(NAMES, values, max_size=3)
        return chosen
    if kind == "array":
        item = schema.get("items", {})
        return st.lists(from_schema(item, depth + 1) if depth < 3 else SCALARS, max_size=4)
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.one_of(st.integers(low, high), NUMBERS)
    if kind == "number":
        return st.one_of(st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False), NUMBERS)
    return {"string": st.one_of(TEXT, NAMES), "boolean": st.booleans(), "null": st.none()}[kind]


# --- mutations of the default config ---------------------------------------------------------------------
def _paths(node, prefix=()):
    """Every key path of ``node`` (mappings and lists)."""
    yield prefix
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _paths(child, (*prefix, key))


def _subschema(path) -> dict:
    schema = SCHEMA
    for key in path:
        if "$ref" in schema:
            schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]]
        if isinstance(key, int):
            schema = schema.get("items", {})
        else:
            extra = schema.get("additionalProperties")
            schema = schema.get("properties", {}).get(key, extra if isinstance(extra, dict) else {})
    return schema


def _set(config, path, value):
    node = config
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


@st.composite
def configs(draw) -> tuple[dict, list[str]]:
    """A config (the default one, mutated one to three times) and the text edits its YAML then gets."""
    config, edits = json.loads(json.dumps(BASE)), []
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(config))
        kind = draw(st.sampled_from(["schema", "schema", "any", "delete", "unknown_key", "non_string_key",
                                     "deep", "empty", "rename", "duplicate", "alias_bomb"]))
        named = kind in ("unknown_key", "non_string_key", "rename") and draw(st.booleans())
        path = draw(st.sampled_from(NAMED if named else paths))
        if kind in ("schema", "any", "deep", "empty") and path:
            value = {"schema": from_schema(_subschema(path)), "any": ANY,
                     "deep": st.sampled_from([10, 63, 64, 65, 300, 5000, 100_000]).map(DEEP.format),
                     "empty": st.sampled_from([{}, [], "", None])}[kind]
            _set(config, path, draw(value))
        elif kind == "delete" and path:
            _set_parent_without(config, path)
        elif kind in ("unknown_key", "non_string_key", "rename"):
            mapping = _mapping_at(config, path)
            if mapping is not None:
                key = draw(NON_STRING_KEYS if kind == "non_string_key" else NAMES)
                if kind == "rename" and mapping:
                    first = next(iter(mapping))
                    mapping[key] = mapping.pop(first)
                else:
                    mapping[key] = draw(ANY)
        elif kind in ("duplicate", "alias_bomb"):
            edits.append(kind)
    return config, edits


def _mapping_at(config, path):
    node = config
    for key in path:
        node = node[key]
    return node if isinstance(node, dict) else None


def _set_parent_without(config, path):
    parent = _mapping_at(config, path[:-1]) if path[:-1] or isinstance(config, dict) else None
    if parent is not None and path[-1] in parent:
        del parent[path[-1]]


def config_text(config: dict, edits: list[str]) -> str:
    """The YAML of ``config`` with the values the dumper cannot write substituted, then ``edits``."""
    text = yaml.safe_dump(config, allow_unicode=True, sort_keys=False, width=10 ** 6)
    text = re.sub(r"'?__deep_(\d+)__'?", lambda m: "[" * int(m.group(1)) + "]" * int(m.group(1)), text)
    text = re.sub(r"'?__big_(\d+)__'?", lambda m: "9" * int(m.group(1)), text)
    for edit in edits:
        if edit == "duplicate":  # the first top-level key once more (the loader keeps the last)
            first = re.search(r"^(\w+):", text, re.MULTILINE)
            text += f"{first.group(1)}: {{}}\n" if first else ""
        elif edit == "alias_bomb":  # "billion laughs": 9^9 values in about 500 bytes
            bomb = ["bomb0: &b0 [x, x, x, x, x, x, x, x, x]"]
            bomb += [f"bomb{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 9)}]" for i in range(1, 10)]
            text = "\n".join(bomb) + "\n" + text
    return text


# --- the two judges -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Verdict:
    accepted: bool
    line: str = ""  # the refusal's one line, its prefix ("fpa check-config: error: ", ...) removed


class Problem(AssertionError):
    """A crash, a hang, a refusal of more than one line, or two judges that disagree."""


def check_config_verdict(path: Path) -> Verdict:
    """``fpa check-config path``, in process: exactly one line, on stdout if accepted, else on stderr."""
    from fpa.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["check-config", str(path)])
            code = 0
        except SystemExit as exit_:
            code = exit_.code
        except Exception as error:  # what the command would print as a traceback
            raise Problem(f"check-config crashed: {type(error).__name__}: {_short(error)}") from None
    lines = (out.getvalue() + err.getvalue()).splitlines()
    if len(lines) != 1:
        raise Problem(f"check-config printed {len(lines)} lines: {lines[:3]}")
    if code == 0 and lines[0].startswith(f"{path}: ok"):
        return Verdict(True)
    prefix = "fpa check-config: error: "
    if code != 2 or not lines[0].startswith(prefix):
        raise Problem(f"check-config exited {code} with {lines[0]!r}")
    return Verdict(False, lines[0].removeprefix(prefix))


def planning_verdict(path: Path) -> Verdict:
    """What ``snakemake --configfile path`` does before any job: Snakemake's own loader and merge (in
    its command line, before the workflow: its refusals are its own), then the Snakefile's judge."""
    from snakemake.common.configfile import load_configfile
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import update_config

    from fpa.planning import judge

    try:
        update_config({}, load_configfile(path))
    except WorkflowError as error:
        return Verdict(False, f"snakemake: {' '.join(str(error).split())}")
    except (RecursionError, ValueError) as error:  # upstream: docs/hostile_input.md
        return Verdict(False, f"snakemake: crashed: {type(error).__name__}: {_short(error)}")
    try:
        judge([path], ROOT)
    except ConfigError as error:
        return Verdict(False, str(error))
    except Exception as error:  # a traceback from the Snakefile
        raise Problem(f"planning crashed: {type(error).__name__}: {_short(error)}") from None
    return Verdict(True)


def snakemake_verdict(path: Path, workdir: Path) -> Verdict:
    """A real ``snakemake -n --configfile path``: accepted, or refused with one ``config error:`` line
    (Snakemake's own refusals of a file its loader cannot read aside)."""
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-d", str(workdir),
                             "--configfile", str(path)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    if "Traceback" in result.stderr + result.stdout and "RecursionError" not in result.stderr:
        raise Problem(f"snakemake -n printed a traceback: {result.stderr[-300:]}")
    if result.returncode == 0:
        return Verdict(True)
    lines = result.stderr.strip().splitlines()
    if len(lines) == 1 and lines[0].startswith("config error: "):
        return Verdict(False, lines[0].removeprefix("config error: "))
    return Verdict(False, "snakemake: " + " ".join(lines)[-300:])


def agree(check: Verdict, planned: Verdict) -> None:
    """Both accept, or both refuse with the same line; where Snakemake's own loader refused first
    (it reads a --configfile before the workflow), check-config must refuse too."""
    if planned.line.startswith("snakemake: "):
        if check.accepted:
            raise Problem(f"Snakemake's loader refuses what check-config accepts: {planned.line}")
    elif check != planned:
        raise Problem(f"check-config says {check}, planning says {planned}")


def _short(error: BaseException) -> str:
    return " ".join(str(error).split())[:300]


@contextlib.contextmanager
def time_limit(seconds: int):
    def hang(*_):
        raise Problem(f"no verdict in {seconds} s (a hang)")

    previous = signal.signal(signal.SIGALRM, hang)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def judge_example(config: dict, edits: list[str], directory: Path) -> tuple[Path, Verdict, Verdict]:
    """Write the example, judge it both ways, raise ``Problem`` unless they agree in time."""
    path = directory / "config.yaml"
    path.write_text(config_text(config, edits), encoding="utf-8")
    with time_limit(EXAMPLE_SECONDS):
        check, planned = check_config_verdict(path), planning_verdict(path)
    agree(check, planned)
    return path, check, planned


# --- the benchmark: a larger budget, every problem recorded --------------------------------------------
def fuzz(examples: int, snakemake_runs: int, seed: int) -> dict:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as hypothesis_seed

    tally = {"accepted": 0, "refused": 0, "refused_by_snakemake_loader": 0, "problem_examples": 0}
    problems: dict[str, str] = {}
    kept: list[tuple[str, Verdict]] = []  # example texts for the real snakemake runs

    @hypothesis_seed(seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=PHASES,
              suppress_health_check=list(HealthCheck))
    @given(configs())
    def run(example):
        with tempfile.TemporaryDirectory() as directory:
            try:
                path, check, planned = judge_example(*example, Path(directory))
            except Problem as problem:
                problems.setdefault(re.sub(r"\d+", "N", str(problem))[:120], str(problem))
                tally["problem_examples"] += 1
                return
            key = "accepted" if check.accepted else \
                "refused_by_snakemake_loader" if planned.line.startswith("snakemake: ") else "refused"
            tally[key] += 1
            if not planned.line.startswith("snakemake: ") and len(kept) < 50 * max(snakemake_runs, 1):
                kept.append((path.read_text(), check))

    started = time.perf_counter()
    run()
    fuzz_seconds = time.perf_counter() - started
    disagreements = real_snakemake_checks(kept, snakemake_runs)
    return {"examples": sum(tally.values()), **tally, "problems": sorted(problems.values()),
            "snakemake_runs": snakemake_runs, "snakemake_disagreements": disagreements,
            "seconds_in_process": round(fuzz_seconds, 1), "seed": seed}


def real_snakemake_checks(kept: list[tuple[str, Verdict]], runs: int) -> list[str]:
    """``snakemake -n`` on ``runs`` of the kept examples, accepted and refused ones alternating."""
    accepted = [example for example in kept if example[1].accepted]
    refused = [example for example in kept if not example[1].accepted]
    chosen = [example for pair in zip(refused, accepted) for example in pair] + refused[len(accepted):]
    disagreements = []
    for text, _ in chosen[:runs]:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "config.yaml"
            path.write_text(text, encoding="utf-8")
            try:
                agree(check_config_verdict(path), snakemake_verdict(path, Path(directory) / "work"))
            except Problem as problem:
                disagreements.append(str(problem))
    return disagreements


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000)
    parser.add_argument("--snakemake", type=int, default=8, help="real snakemake -n runs")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    record = fuzz(args.examples, args.snakemake, args.seed)
    write_json(args.out, record)
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
