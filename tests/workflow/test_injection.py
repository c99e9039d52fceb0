"""No config string reaches a job's shell unquoted (issue 25): shell metacharacters, quotes
and spaces planted in every path and string a config can hold arrive in ``python -m fpa``
as single intact arguments, and nothing planted runs. Names that become path segments
(models, methods, benchmarks, tables, experiment) are refused instead."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from workflow_helpers import ROOT, skip_or_fail, snakemake

from fpa.errors import ConfigError
from fpa.planning import judge_config

TINY = ROOT.parent / "shared" / "data" / "tiny"
if not TINY.is_dir():
    TINY = Path("/work/shared/data/tiny")
# each would leave a file named INJECTED* in the job's directory if a shell ran it
PLANTED = "a;touch INJECTED1;b c$(touch INJECTED2)`touch INJECTED3`'q\"d"
SOURCE = "gsm8k/test.jsonl"  # a tiny mirror file standing in for every catalog file
ENTRIES = {  # section -> catalog entries the planted config reads
    "benchmarks": ["gsm8k", "math500", "math_perturb_simple", "math_perturb_hard"],
    "training": ["math_train", "math_test"],
    "code": ["taco_train", "apps_train"],
    "preference": ["math_step_dpo"],
}


def _catalog(mirror: Path) -> dict:
    """A catalog whose every file sits at a planted path of ``mirror`` (a copy of one tiny file)."""
    sha256 = hashlib.sha256((TINY / SOURCE).read_bytes()).hexdigest()
    catalog = {"sample": "planted paths"}
    for section, names in ENTRIES.items():
        catalog[section] = {}
        for name in names:
            path = f"{name} {PLANTED}/test.jsonl"
            (mirror / path).parent.mkdir(parents=True)
            shutil.copy(TINY / SOURCE, mirror / path)
            catalog[section][name] = {"path": path, "sha256": sha256, "url": "https://example.invalid/x",
                                      "upstream_format": "jsonl", "loader": "gsm8k", "records": 20}
    return catalog


def planted_config(tmp: Path, dataset: str) -> Path:
    """A config with ``PLANTED`` in the mirror, the catalog's path and entries, a benchmark file's
    path, a hub id, the prompt, labels and a caption; ``dataset`` picks the rules it plans."""
    mirror = tmp / f"mirror {PLANTED}"
    mirror.mkdir()
    catalog_path = tmp / f"catalog {PLANTED}" / "benchmarks.yaml"
    catalog_path.parent.mkdir()
    catalog_path.write_text(yaml.safe_dump(_catalog(mirror)))
    records = tmp / f"bench {PLANTED}.jsonl"
    shutil.copy(TINY / SOURCE, records)
    config = {
        "experiment": "planted",
        "models": {"m": {"source": "hub", "hub_id": f"org/{PLANTED}", "prompt_template": f"{PLANTED} {{problem}}"}},
        "data": {"catalog": str(catalog_path), "mirror": str(mirror)},
        "dataset": {"source": dataset},
        "benchmarks": {"pooled": {"source": "catalog", "parts": ["gsm8k"], "grader": "math", "label": PLANTED},
                       "file": {"source": "file", "path": str(records), "grader": "math"},
                       # a grader that reads its task file: the column of generate + evaluate-code
                       "code": {"source": "file", "path": str(records), "grader": "livecodebench"}},
        "curve_benchmarks": ["file"],
        "model_selection": {"benchmark": "file"},
        "tables": {"t": {"columns": ["pooled", "file", "code"], "caption": PLANTED}},
        "training": {"snapshot_every": 2},
        "methods": {"offrl": {"objective": "offrl", "label": PLANTED}},
        "figures": {"future_policy_validation": {}, "accuracy_curves": {}},  # the latter draws curves
        "future_policy": {"anchor_step": 2, "target_steps": [4]},
        "seeds": [1],
    }
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _injected(*roots: Path) -> list[Path]:
    return [path for root in roots for path in root.rglob("INJECTED*")]


@pytest.fixture
def tiny_mirror():
    skip_or_fail(None if TINY.is_dir() else f"no tiny data mirror at {TINY}", "the tiny data mirror")


def _strings(obj):
    """Every string of a parsed JSON value."""
    if isinstance(obj, str):
        yield obj
    for value in obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else ():
        yield from _strings(value)


def _commands(text: str) -> list[list[str]]:
    lines = [line for line in text.splitlines() if line.startswith("Shell command: ")]
    return [shlex.split(line.removeprefix("Shell command: ")) for line in lines if line != "Shell command: None"]


@pytest.mark.parametrize("dataset", ["math12k", "step_dpo", "taco_apps"])
def test_planted_strings_arrive_as_single_arguments(tmp_path, tiny_mirror, dataset):
    config = planted_config(tmp_path, dataset)
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = snakemake(ROOT, workdir, config, "-n", "-p", "--cores", "1")
    commands = _commands(result.stdout)
    assert len(commands) > 10, result.stdout[-3000:]
    seen = set()
    for words in commands:
        for word in words:
            if "INJECTED" not in word:
                continue
            # a planted string split by the shell would leave fragments without the rest of it
            assert PLANTED in word or any(PLANTED in text for text in _strings(json.loads(word))), (word, words)
            seen.add(words[words.index("fpa") + 1])
    expected = {"fetch-data", "prepare-benchmark", "fetch-model", "evaluate", "generate", "evaluate-code",
                "curve", "select-checkpoint", "future-policy", "aggregate", "figure"}
    expected |= {"math12k": {"math-train"}, "step_dpo": {"step-dpo-dataset"}, "taco_apps": {"code-train"}}[dataset]
    assert expected <= seen, sorted(expected - seen)
    assert not _injected(tmp_path, ROOT)


def test_fetch_data_runs_from_a_planted_mirror(tmp_path, tiny_mirror):
    config = planted_config(tmp_path, "math12k")
    workdir = tmp_path / "work"
    workdir.mkdir()
    target = f"resources/data/gsm8k {PLANTED}/test.jsonl"
    snakemake(ROOT, workdir, config, "--cores", "1", target)
    assert (workdir / target).read_bytes() == (TINY / SOURCE).read_bytes()
    assert not _injected(tmp_path, ROOT)


@pytest.mark.parametrize("key_path", ["models", "methods", "benchmarks", "tables", "experiment"])
def test_names_with_shell_metacharacters_are_refused(tmp_path, key_path):
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    if key_path == "experiment":
        config["experiment"] = PLANTED
    else:
        first = next(iter(config[key_path]))
        config[key_path] = {PLANTED: config[key_path][first], **config[key_path]}
    with pytest.raises(ConfigError) as info:
        judge_config(config, "cfg.yaml")
    message = str(info.value)
    assert message.startswith(f"cfg.yaml: {key_path}") and repr(PLANTED) in message and "\n" not in message
