"""One generation engine per job: a curve's snapshots are swapped into the engine built for the
first (``fpa.generation.backend.Engine``), with the HF backend for real and with vLLM's engine
counted (the real vLLM engine: ``tests/generation/test_vllm.py``), and vLLM's ``max_model_len``
sized from the job's prompts."""

from __future__ import annotations

import argparse
import json
import sys
import types
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from transformers import AutoTokenizer, Qwen2Config, Qwen2ForCausalLM

from fpa.cli.curve import curve_models, curve_rows
from fpa.evaluation import sampling
from fpa.generation.hf import HFBackend
from fpa.io import write_jsonl
from fpa.toy.task import make_problems
from fpa.toy.tokenizer import build_tokenizer
from fpa.training.checkpoints import snapshot_name

ROOT = Path(__file__).resolve().parents[2]
BENCH = {"source": "toy", "n": 2, "grader": "toy", "n_problems": 5, "n_operands": 3}
GENERATION = {"backend": "hf", "stop": [], "temperature": 1.0, "max_new_tokens": 10, "batch_size": 4,
              "tensor_parallel_size": 1, "max_model_len": None}


def save_model(directory: Path, seed: int, hidden_size: int = 64) -> None:
    tokenizer = build_tokenizer()
    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=1, num_key_value_heads=1, head_dim=64,
                         max_position_embeddings=256, initializer_range=0.1, tie_word_embeddings=True,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    Qwen2ForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory) -> Path:
    """A run's three snapshots: the same architecture, each its own random weights."""
    root = tmp_path_factory.mktemp("run") / "snapshots"
    for step in (1, 2, 3):
        save_model(root / snapshot_name(step), seed=step)
    return root


@pytest.fixture(scope="module")
def bench_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bench") / "bench.jsonl"
    write_jsonl(path, make_problems(BENCH["n_problems"], seed=0, n_operands=BENCH["n_operands"]))
    return path


def curve_args(snapshots: Path, bench_file: Path, work: Path, generation: dict) -> argparse.Namespace:
    config = {"generation": generation, "prompt_template": "Q: {problem}\nA:", "chat_template": False,
              "benchmarks": {"b": BENCH}}
    return argparse.Namespace(config_json=config, benchmark=[("b", str(bench_file))], snapshots=str(snapshots),
                              gpus=1, seed=3, code=None, work=str(work), shard_rows=4096, threads=None)


def count_constructions(monkeypatch, backend_class) -> list:
    """The real ``backend_class``, each construction recorded."""
    built, construct = [], backend_class.__init__

    def counted(self, model_dir, **options):
        built.append(str(model_dir))
        construct(self, model_dir, **options)

    monkeypatch.setattr(backend_class, "__init__", counted)
    return built


def sample_each(snapshots: Path, bench_file: Path, engine) -> list:
    """Each snapshot's completions on the benchmark, from ``engine`` (None: a new engine per snapshot,
    as every ``fpa evaluate`` job and, before the shared engine, ``fpa curve`` did)."""
    config = curve_args(snapshots, bench_file, Path("unused"), GENERATION).config_json
    return [next(sampling.sample_benchmarks(config, [("b", str(bench_file), None)], "curve", model=model, gpus=1,
                                            seed=3, code=None, work=None, shard_rows=4096, engine=engine)).completions
            for _, model in curve_models(str(snapshots))]


def test_a_curve_of_three_snapshots_starts_one_hf_engine(monkeypatch, tmp_path, snapshots, bench_file):
    built = count_constructions(monkeypatch, HFBackend)
    rows = curve_rows(curve_args(snapshots, bench_file, tmp_path, GENERATION), curve_models(str(snapshots)))
    assert [row["step"] for row in rows] == [1, 2, 3]
    assert built == [str(snapshots / snapshot_name(1))]  # before the shared engine: one per snapshot

    built.clear()
    fresh = sample_each(snapshots, bench_file, engine=None)
    assert len(built) == 3
    built.clear()
    swapped = sample_each(snapshots, bench_file, engine=sampling.job_engine({"generation": GENERATION}, gpus=1))
    assert len(built) == 1
    assert swapped == fresh  # each snapshot's weights, not the first one's
    assert len({json.dumps([[c.text for c in row] for row in each]) for each in fresh}) == 3


def test_a_checkpoint_of_another_architecture_is_refused(tmp_path, snapshots):
    save_model(tmp_path / "wider", seed=0, hidden_size=128)
    backend = HFBackend(snapshots / snapshot_name(1))
    with pytest.raises(ValueError, match="wider: not a checkpoint of the loaded model's architecture: tensors of "
                                         "another name or shape"):
        backend.load_weights(tmp_path / "wider")
    with pytest.raises(ValueError, match="expected model.safetensors or model.safetensors.index.json"):
        backend.load_weights(tmp_path)


class CountedLLM:
    """Stands in for ``vllm.LLM`` where vLLM is not installed, only to count the engines a job
    starts and what it asks of them; its samples are all eos."""

    built: list = []
    calls: list = []

    def __init__(self, model: str, **options):
        CountedLLM.built.append({"model": model, **options})
        self.tokenizer = AutoTokenizer.from_pretrained(model)

    def get_tokenizer(self):
        return self.tokenizer

    def collective_rpc(self, method: str, args: tuple = (), kwargs: dict | None = None):
        self.calls.append((method, args, kwargs or {}))

    def reset_prefix_cache(self):  # vLLM's answer: False while a block is in use
        self.calls.append(("reset_prefix_cache", (), {}))
        return CountedLLM.resets

    def generate(self, inputs, params, use_tqdm):
        return [SimpleNamespace(outputs=[SimpleNamespace(index=j, token_ids=[self.tokenizer.eos_token_id])
                                         for j in range(p.n)]) for p in params]


@pytest.fixture
def counted_vllm(monkeypatch):
    module = types.ModuleType("vllm")
    module.LLM, module.SamplingParams = CountedLLM, lambda **params: SimpleNamespace(**params)
    monkeypatch.setitem(sys.modules, "vllm", module)
    CountedLLM.built, CountedLLM.calls, CountedLLM.resets = [], [], True
    return CountedLLM


def test_a_vllm_curve_of_three_snapshots_starts_one_engine_and_reloads(counted_vllm, tmp_path, snapshots,
                                                                       bench_file):
    """One vLLM engine for the curve's three snapshots (before: three), built with the job's
    ``max_model_len``; each later snapshot is loaded in place by the workers (``CheckpointReload``),
    and the prefix cache of the old weights cleared. The real engine: ``tests/generation/test_vllm.py``."""
    generation = {**GENERATION, "backend": "vllm"}
    curve_rows(curve_args(snapshots, bench_file, tmp_path, generation), curve_models(str(snapshots)))
    (engine,) = counted_vllm.built
    assert engine["model"] == str(snapshots / snapshot_name(1))
    assert engine["worker_extension_cls"] == "fpa.generation.vllm.CheckpointReload"
    tokenizer = AutoTokenizer.from_pretrained(snapshots / snapshot_name(1))
    prompts = sampling.make_prompts({"prompt_template": "Q: {problem}\nA:"},
                                    [r["problem"] for r in make_problems(5, seed=0, n_operands=3)], None)
    longest = max(len(tokenizer.encode(p, add_special_tokens=False)) for p in prompts)
    assert engine["max_model_len"] == longest + GENERATION["max_new_tokens"]
    assert counted_vllm.calls == [call for step in (2, 3) for call in (
        ("load_checkpoint", (str(snapshots / snapshot_name(step)),), {}), ("reset_prefix_cache", (), {}))]


def test_a_refused_prefix_cache_reset_stops_the_curve(counted_vllm, tmp_path, snapshots, bench_file):
    """Sampling the next snapshot with the old weights' cached blocks would mix two checkpoints: a refused
    reset ends the job, naming the snapshot."""
    counted_vllm.resets = False
    with pytest.raises(RuntimeError, match=f"refused to reset its prefix cache after loading .*{snapshot_name(2)}"):
        curve_rows(curve_args(snapshots, bench_file, tmp_path, {**GENERATION, "backend": "vllm"}),
                   curve_models(str(snapshots)))


def test_a_paper_curve_job_gives_vllm_its_prompts_length(counted_vllm, mirror, snapshots, tmp_path):
    """``max_model_len`` of config/paper.yaml's curve job (MATH500 prompts, max_new_tokens 2048), with the
    toy tokenizer standing in for Qwen3's (the paper's model is not here): the longest prompt plus
    2048, not the model's maximum; ``generation.max_model_len`` overrides it."""
    from fpa.planning import judge

    curve = json.loads(judge([ROOT / "config" / "paper.yaml"]).evaluate.curve_config(SimpleNamespace(model="qwen3-4b-base")))
    problems = [json.loads(line)["problem"] for line in (mirror / "math500" / "test.jsonl").open()]
    write_jsonl(tmp_path / "math500.jsonl",
                [{"id": str(i), "problem": p, "answer": ""} for i, p in enumerate(problems)])
    model = str(snapshots / snapshot_name(1))

    def engine_len(config_slice: dict) -> int:
        counted_vllm.built = []
        next(sampling.sample_benchmarks(config_slice, [("math500", str(tmp_path / "math500.jsonl"), None)], "curve",
                                        model=model, gpus=1, seed=0, code=None, work=None, shard_rows=4096))
        return counted_vllm.built[0]["max_model_len"]

    tokenizer = AutoTokenizer.from_pretrained(model)
    longest = max(len(tokenizer.encode(curve["prompt_template"].replace("{problem}", p), add_special_tokens=False))
                  for p in problems)
    assert curve["generation"]["max_new_tokens"] == 2048 and curve["generation"]["max_model_len"] is None
    assert engine_len(curve) == longest + 2048
    print(f"paper curve job (MATH500, toy tokenizer): max_model_len {longest + 2048}")
    assert engine_len({**curve, "generation": {**curve["generation"], "max_model_len": 4096}}) == 4096
