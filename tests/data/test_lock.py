"""``fpa lock`` pins a hub model (from a model mirror: a hub cache holding a tiny HF-format model)
and a hub data file (from the shared data mirror) into the files that name them, keeping their
comments; ``--check`` fails on anything unpinned; a tampered file fails lock and fetch naming it."""

import shutil
from pathlib import Path

import pytest
import yaml

from fpa.catalog import read_benchmarks_config
from fpa.cli import main
from fpa.data.download import fetch
from fpa.data.models import snapshot_files
from fpa.data.yaml_edit import set_entry_keys
from fpa.io import sha256_file

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"
# the tiny mirror's MATH500, pinned by the CI catalog (.test/config_math/benchmarks.yaml)
TINY_MATH500_SHA = "4c521d332fd232b08f4bacb04e52b09982867d3bf37f0bd9cb2ddc58804f11d0"

CONFIG = """\
experiment: lock-test
models:
  tiny:
    # a comment the lock keeps
    source: hub
    hub_id: org/tiny
    prompt_template: "Q: {{problem}}\\nA:"
data:
  catalog: {catalog}
  mirror: {mirror}
  model_mirror: {model_mirror}
dataset: {{source: toy, n_problems: 8}}
benchmarks:
  math500: {{source: catalog, parts: [math500], n: 1, grader: math}}
tables:
  math: [math500]
methods:
  fpa: {{objective: fpa}}
seeds: [1]
"""


@pytest.fixture
def project(tmp_path, tiny, toy_model_dir):
    """A config with an unpinned hub model (in a model mirror) and an unpinned hub data file."""
    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / COMMIT
    shutil.copytree(toy_model_dir, snapshot)
    (tmp_path / "hub" / "models--org--tiny" / "refs").mkdir()
    (tmp_path / "hub" / "models--org--tiny" / "refs" / "main").write_text(COMMIT)
    catalog = tmp_path / "benchmarks.yaml"
    text = (ROOT / ".test" / "config_math" / "benchmarks.yaml").read_text()
    catalog.write_text(set_entry_keys(text, "catalog", "benchmarks", "math500",
                                      {"sha256": None, "hub": "example/math500"}))
    mirror = tmp_path / "data"
    shutil.copytree(tiny / "math500", mirror / "math500")
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.format(catalog=catalog, mirror=mirror, model_mirror=tmp_path / "hub"))
    return config, catalog, mirror, snapshot


def _fails(argv, capsys) -> str:
    with pytest.raises(SystemExit):
        main(argv)
    return capsys.readouterr().err


def test_lock_pins_a_model_and_a_data_file_and_check_verifies_them(project, capsys):
    config, catalog, _, snapshot = project
    error = _fails(["lock", "--check", str(config)], capsys)
    assert f"{config}: models.tiny: org/tiny not pinned (revision 'main', no files)" in error
    assert f"{catalog}: benchmarks.math500: hub file example/math500/test.jsonl not pinned (sha256: null)" in error

    main(["lock", str(config)])
    out = capsys.readouterr().out
    files = snapshot_files(snapshot)
    assert f"models.tiny: org/tiny pinned at {COMMIT} ({len(files)} files)" in out
    assert f"benchmarks.math500: pinned sha256 {TINY_MATH500_SHA} from the mirror" in out
    model = yaml.safe_load(config.read_text())["models"]["tiny"]
    assert model["revision"] == COMMIT and model["files"] == files and "model.safetensors" in files
    assert "    # a comment the lock keeps\n" in config.read_text()
    assert read_benchmarks_config(catalog)["benchmarks"]["math500"]["sha256"] == TINY_MATH500_SHA
    assert catalog.read_text().count("\n") == (ROOT / ".test/config_math/benchmarks.yaml").read_text().count("\n") + 1

    main(["lock", "--check", str(config)])
    out = capsys.readouterr().out
    assert f"models.tiny: org/tiny verified at {COMMIT}" in out and "is pinned" in out


def test_a_tampered_model_file_fails_lock_and_fetch_naming_it(project, capsys, tmp_path):
    config, *_, snapshot = project
    main(["lock", str(config)])
    pinned = yaml.safe_load(config.read_text())["models"]["tiny"]
    expected = pinned["files"]["config.json"]
    (snapshot / "config.json").write_text((snapshot / "config.json").read_text().replace("64", "65"))
    got = sha256_file(snapshot / "config.json")
    message = f"config.json: sha256 mismatch at revision {COMMIT}: expected {expected}, got {got}"

    assert f"{config}: models.tiny: model org/tiny: {message}" in _fails(["lock", "--check", str(config)], capsys)
    import json
    out = tmp_path / "resources" / "models" / "tiny"
    error = _fails(["fetch-model", "--config-json", json.dumps(pinned), "--model-mirror", str(tmp_path / "hub"),
                    "--out", str(out)], capsys)
    assert f"fpa fetch-model: error: model org/tiny: {message}" in error
    assert not out.exists() and not list(out.parent.iterdir())


def test_fetch_model_copies_the_pinned_snapshot(project, capsys, tmp_path):
    import json

    config, *_, snapshot = project
    main(["lock", str(config)])
    pinned = yaml.safe_load(config.read_text())["models"]["tiny"]
    out = tmp_path / "resources" / "models" / "tiny"
    main(["fetch-model", "--config-json", json.dumps(pinned), "--model-mirror", str(tmp_path / "hub"),
          "--out", str(out)])
    assert snapshot_files(out) == pinned["files"]
    assert f"at revision {COMMIT} ({len(pinned['files'])} files, verified)" in capsys.readouterr().out


def test_a_tampered_data_file_fails_lock_and_fetch_naming_it(project, capsys):
    config, catalog, mirror, _ = project
    main(["lock", str(config)])
    tampered = mirror / "math500" / "test.jsonl"
    tampered.write_text(tampered.read_text().replace("\\frac", "\\dfrac", 1))
    got = sha256_file(tampered)
    error = _fails(["lock", "--check", str(config)], capsys)
    assert (f"{catalog}: benchmarks.math500: {tampered}: sha256 mismatch: expected {TINY_MATH500_SHA}, "
            f"got {got}") in error
    entry = {**read_benchmarks_config(catalog)["benchmarks"]["math500"]}
    with pytest.raises(ValueError, match=f"math500: sha256 mismatch for {tampered}: expected {TINY_MATH500_SHA}, "
                                         f"got {got}"):
        fetch(entry, mirror / "out.jsonl", mirror_dir=mirror)


def test_paper_configs_make_an_unpinned_fetch_visible(capsys):
    for name in ("paper.yaml", "paper-code.yaml", "paper-stepdpo.yaml", "paper-rlvr.yaml"):
        error = _fails(["lock", "--check", str(ROOT / "config" / name)], capsys)
        assert "not pinned" in error and "run `fpa lock" in error, name


def test_fetch_model_refuses_a_chat_template_its_tokenizer_lacks(project, capsys, tmp_path):
    """Issue 52: before, the model was fetched and the first job rendering a prompt failed."""
    import json

    config, *_ = project
    main(["lock", str(config)])
    chat = {**yaml.safe_load(config.read_text())["models"]["tiny"], "chat_template": True}
    out = tmp_path / "resources" / "models" / "tiny"
    error = _fails(["fetch-model", "--config-json", json.dumps(chat), "--model-mirror", str(tmp_path / "hub"),
                    "--out", str(out)], capsys)
    assert ("fpa fetch-model: error: model org/tiny: chat_template: its tokenizer has no chat template to wrap the "
            "prompts in; expected false (the prompt_template alone), got true") in error.splitlines()
    assert not out.exists() and not list(out.parent.iterdir())


def test_fetch_model_takes_a_chat_template_its_tokenizer_has(project, tmp_path):
    import json

    from transformers import AutoTokenizer

    config, *_, snapshot = project
    tokenizer = AutoTokenizer.from_pretrained(snapshot)
    tokenizer.chat_template = "{{ messages[0]['content'] }}"
    tokenizer.save_pretrained(snapshot)
    main(["lock", str(config)])
    chat = {**yaml.safe_load(config.read_text())["models"]["tiny"], "chat_template": True}
    out = tmp_path / "resources" / "models" / "tiny"
    main(["fetch-model", "--config-json", json.dumps(chat), "--model-mirror", str(tmp_path / "hub"), "--out", str(out)])
    assert AutoTokenizer.from_pretrained(out).chat_template == tokenizer.chat_template
