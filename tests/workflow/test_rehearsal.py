"""The paper's path rehearsed end to end (config/paper-rehearsal.yaml) before the first GPU-hour.

The paper's three model families built by rule build_models (``fpa.data.rehearsal_models``: real
vocabularies, special tokens, BPE and Llama 3.2's chat template; random weights, shrunk) into a
hub-cache model mirror, pinned by ``fpa lock`` and fetched by ``fetch_model``; the benchmarks from
the tiny data mirror;
then the whole DAG: sampling, the offline datasets, the reference caches, FPA (each model) and
Off-RL (Qwen3) under FSDP with gradient checkpointing on 2 gloo ranks in bf16, GRPO through TRL,
evaluation, model selection, the tables with Δ against the paper and a figure. Each check names
the defect of the first GPU-hour (issue 32) that it catches when that defect is put back. The GPU
script's DAG measurement (``benchmarks/gpu/dag.py``: this DAG for one model) is checked on this run too.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from workflow_helpers import (MIRROR, ROOT, TINY_MIRROR_RUN, copy_project, planned_resources, skip_or_fail,
                              snakemake)

from fpa.data.rehearsal_models import FAMILIES
from fpa.io import read_json, read_jsonl
from fpa.paths import BUILT_MODEL_MIRROR, TOKENIZER_WHEELS

sys.path.insert(0, str(ROOT / "benchmarks"))
from gpu import dag  # noqa: E402

CONFIG = ROOT / "config" / "paper-rehearsal.yaml"
MODELS = ("qwen3-4b-base", "qwen2.5-math-7b", "llama-3.2-3b-instruct")
pytestmark = [*TINY_MIRROR_RUN, pytest.mark.xdist_group("rehearsal")]  # one worker builds the rehearsal


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """The models built by their rule (build_models), a copy of the config locked against them, and the
    DAG run, as a user runs it but for the data: the tiny data mirror's catalog."""
    base = tmp_path_factory.mktemp("rehearsal")
    project = copy_project(base)
    config = yaml.safe_load(CONFIG.read_text())
    config["data"].update(catalog=str(project / ".test" / "config_math" / "benchmarks.yaml"),
                          mirror=str(MIRROR / "tiny"))
    config_path = base / "config.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    workdir = base / "work"
    built = snakemake(project, workdir, config_path, BUILT_MODEL_MIRROR, "--cores", "1", check=False)
    if built.returncode != 0:  # no PyPI: the tokenizer wheels cannot be fetched
        log = workdir / "logs" / "build_models.log"
        skip_or_fail(f"rule build_models failed: {log.read_text()[-600:] if log.is_file() else built.stderr[-600:]}",
                     "rehearsal")
    env = {**os.environ, "PYTHONPATH": str(project / "src")}
    locked = subprocess.run([sys.executable, "-m", "fpa", "lock", str(config_path)], env=env, capture_output=True,
                            text=True, timeout=300, cwd=workdir)
    assert locked.returncode == 0, locked.stdout + locked.stderr
    started = time.perf_counter()
    snakemake(project, workdir, config_path, "--cores", "2", timeout=1800)
    print(f"rehearsal DAG in {time.perf_counter() - started:.0f} s")
    return SimpleNamespace(project=project, workdir=workdir, config=yaml.safe_load(config_path.read_text()),
                           config_path=config_path)


def _tokenizer(workdir: Path, model: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(workdir / "resources" / "models" / model)


def test_models_enter_pinned_through_fetch_model_with_their_familys_tokens(rehearsal):
    for name in MODELS:
        model = rehearsal.config["models"][name]
        assert re.fullmatch(r"[0-9a-f]{40}", model["revision"]) and "model.safetensors" in model["files"]
        record = read_json(rehearsal.workdir / "resources" / "models" / f"{name}.prov.json")
        assert model["revision"] in json.dumps(record)
        facts = FAMILIES[model["architecture"]["model_type"]]
        tokenizer = _tokenizer(rehearsal.workdir, name)
        assert (tokenizer.eos_token, tokenizer.pad_token, tokenizer.bos_token) == (facts["eos"], facts["pad"],
                                                                                  facts["bos"])
        first = tokenizer("Q: 1 + 1")["input_ids"][0]
        assert (first == tokenizer.bos_token_id) == facts["add_bos"]
        config = json.loads((rehearsal.workdir / "resources" / "models" / name / "config.json").read_text())
        assert config["vocab_size"] == model["architecture"]["vocab_size"] >= len(tokenizer)


def test_llama_prompts_stay_the_same_when_the_day_changes(rehearsal, monkeypatch):
    """Defect: Llama 3.2's chat template writes today's date (``strftime_now``) into each prompt."""
    import transformers.utils.chat_template_utils as chat_utils

    from fpa.samples.prompts import build_prompts

    model = rehearsal.config["models"]["llama-3.2-3b-instruct"]
    tokenizer = _tokenizer(rehearsal.workdir, "llama-3.2-3b-instruct")
    problems = [row["problem"] for row in read_jsonl(rehearsal.workdir / "results" / "problems" / "train.jsonl")][:3]

    def prompts_on(day: datetime) -> list[str]:
        monkeypatch.setattr(chat_utils, "datetime", SimpleNamespace(now=lambda: day))
        return build_prompts(model["prompt_template"], problems, chat_tokenizer=tokenizer)

    today, later = prompts_on(datetime(2026, 11, 27)), prompts_on(datetime(2027, 3, 1))
    assert today == later
    assert all("<|start_header_id|>system<|end_header_id|>" in prompt for prompt in today)
    sampled = {row["prompt"] for row in _samples(rehearsal.workdir, "llama-3.2-3b-instruct")}
    assert set(today) <= sampled


def _samples(workdir: Path, model: str) -> list[dict]:
    return read_jsonl(workdir / "results" / "datasets" / model / "samples.jsonl")


def test_completions_cut_at_the_length_limit_train_without_eos(rehearsal):
    """Defect: EOS appended to every completion, also to those cut at max_new_tokens; no finish
    reason recorded. The planted answerer ends half its lines with EOS and the others at the limit."""
    from fpa.samples.tokenize import encode_record

    for name in MODELS:
        samples = _samples(rehearsal.workdir, name)
        reasons = {row["finish_reason"] for row in samples}
        assert reasons == {"stop", "length"}, (name, reasons)
        tokenizer = _tokenizer(rehearsal.workdir, name)
        for row in samples[:40]:
            encoded = encode_record(tokenizer, row, 512)
            ends_with_eos = encoded.input_ids[-1] == tokenizer.eos_token_id
            assert ends_with_eos == (row["finish_reason"] == "stop"), (name, row)


def test_training_runs_fsdp_on_two_ranks_with_gradient_checkpointing_in_bf16(rehearsal):
    """Defects: Llama's tokenizer has no pad token (the trainer's collate got None and crashed);
    FSDP2 with gradient checkpointing never ran."""
    runs = [(name, method) for name in MODELS for method in ("offrl", "fpa")
            if name in rehearsal.config["methods"][method].get("models", MODELS)]
    assert len(runs) == len(MODELS) + 1  # FPA on each model, Off-RL on Qwen3
    for name, method in runs:
        state = read_json(rehearsal.workdir / "results" / "train" / name / method / "42" / "checkpoint"
                          / "training_state.json")
        assert state["world"] == 2 and state["summary"]["steps"] >= 1, (name, method, state)
        training = {key: state["training"][key] for key in ("parallel", "gradient_checkpointing", "precision")}
        assert training == {"parallel": "fsdp", "gradient_checkpointing": True, "precision": "bf16"}, (name, method)
    assert _tokenizer(rehearsal.workdir, "llama-3.2-3b-instruct").pad_token is None


def test_checkpoints_and_snapshots_are_saved_in_the_trainings_dtype(rehearsal):
    """Defect: checkpoints and snapshots saved in fp32 (twice bf16's disk, ~350 GB a 4B run)."""
    from safetensors import safe_open

    for name in MODELS:
        run = rehearsal.workdir / "results" / "train" / name / "fpa" / "42"
        files = [run / "checkpoint" / "model.safetensors", *sorted((run / "snapshots").glob("*/model.safetensors"))]
        assert len(files) >= 2, files
        for path in files:
            with safe_open(str(path), "pt") as weights:
                dtypes = {weights.get_slice(key).get_dtype() for key in weights.keys()}
            assert dtypes == {"BF16"}, (path, dtypes)


def test_the_reference_cache_computes_on_its_jobs_device(rehearsal):
    """Defect: the cache job asks for a GPU and computes on the CPU (no --device was passed)."""
    for name in MODELS:
        log = (rehearsal.workdir / "logs" / "cache_reference" / f"{name}.log").read_text()
        assert re.search(r"cached \d+ samples on cpu", log), log[-500:]
    config = yaml.safe_load(rehearsal.config_path.read_text())
    config["resources"]["cache_reference"] = {"gpu": 1}
    on_gpu = rehearsal.config_path.with_name("gpu.yaml")
    on_gpu.write_text(yaml.safe_dump(config, sort_keys=False))
    result = snakemake(rehearsal.project, rehearsal.workdir, on_gpu, "-n", "-p", "--forcerun", "cache_reference",
                       "--cores", "2", f"results/reference/{MODELS[0]}/cache")
    [command] = re.findall(r"python -m fpa (cache-reference .*?) > \S+ 2>&1$", result.stdout, flags=re.M)
    argv = shlex.split(command)
    assert argv[argv.index("--device") + 1] == "cuda"


def _table(workdir: Path, name: str) -> list[dict]:
    with open(workdir / "results" / "tables" / f"{name}.csv") as handle:
        return list(csv.DictReader(handle))


def test_tables_carry_the_papers_cells_with_delta_and_figures_are_drawn(rehearsal):
    offrl_models = rehearsal.config["methods"]["offrl"]["models"]  # the ablation table's, Off-RL's own
    assert rehearsal.config["tables"]["ablation"]["models"] == offrl_models
    tables = (("main", {"base", "fpa"}, MODELS), ("ablation", {"base", "offrl", "fpa"}, offrl_models))
    for table, runs, models in tables:
        rows = _table(rehearsal.workdir, table)
        assert {row["row"].rsplit("/", 1)[-1] for row in rows} == runs, table
        printed = [row for row in rows if row["MATH500_paper"]]
        assert len(printed) == len(models) * len(runs), table  # the paper prints every cell of these rows
        for row in printed:
            delta = float(row["MATH500"]) - float(row["MATH500_paper"])
            assert abs(delta - float(row["MATH500_delta"])) < 0.006, row
    assert {row["row"].rsplit("/", 1)[-1] for row in _table(rehearsal.workdir, "rlvr")} == {"base", "fpa", "grpo"}
    figures = rehearsal.workdir / "results" / "figures" / "paper-rehearsal"
    for name in offrl_models:  # Off-RL against FPA: on each model that trains both
        assert (figures / name / "training_dynamics.png").is_file()


def test_the_gpu_scripts_dag_reads_each_jobs_device_and_plans_the_gpu_jobs(rehearsal, tmp_path):
    """benchmarks/gpu/run.py's ``dag`` on a lent GPU runs this DAG for one model: its rows of each job
    (rule, device, dtype, wall time, host peak) read from this run's records, and its plan for CUDA
    (the config it builds and locks, its Snakemake call) dry-run, every device job given the GPU."""
    rows = dag.job_rows(rehearsal.workdir)
    assert {row["rule"] for row in rows} == set(dag.RULES)
    assert {row["device"] for row in rows} == {"cpu"}
    assert all(row["wall_s"] > 0 and row["host_peak_mb"] > 0 for row in rows)
    # the cache in fp32 on the CPU, where the head's products are fp32 (fpa.memory.training.reference_cache_dtype)
    assert {row["rule"]: row["dtype"] for row in rows} == {
        "sample_offline": "float32", "cache_reference": "float32", "train": "bf16", "evaluate": "float32"}

    wheels = rehearsal.workdir / TOKENIZER_WHEELS  # what rule build_models downloaded
    config = dag.rehearsal_config(tmp_path, MIRROR, wheels, cuda=True, tiny=False)
    planned = subprocess.run(dag.snakemake_command(config, tmp_path / "dag", True, "-n"), env=dag.job_environment(),
                             capture_output=True, text=True, timeout=300)
    assert planned.returncode == 0, planned.stdout[-3000:] + planned.stderr[-3000:]
    device_jobs = [(rule, resources) for rule, resources in planned_resources(planned.stdout)
                   if rule in dag.RULES]
    assert {rule for rule, _ in device_jobs} == set(dag.RULES)
    assert all(resources["gpu"] == "1" for _, resources in device_jobs), device_jobs
