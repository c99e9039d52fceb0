"""The vLLM backend, run for real: vLLM's CPU build on a tiny toy Qwen2 (head_dim 64).

vLLM lives in its own virtual environment (``.ci/install-vllm DIR``, conda:
``envs/vllm.yaml``), so these tests run one driver process there, with this
checkout's ``src`` on its path, and compare its completions with ``HFBackend``
here. ``FPA_VLLM_PYTHON`` names that environment's python; without it the
engine tests are skipped, or fail under ``CI=true``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from fpa.generation.backend import BACKENDS, get_backend
from fpa.generation.hf import HFBackend
from fpa.generation.stops import Completion
from fpa.samples.prompts import render_prompt
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems
from fpa.toy.tokenizer import build_tokenizer

SRC = Path(__file__).resolve().parents[2] / "src"
# one worker under pytest-xdist: the module's engine runs (its calls, the HF comparisons) are built once
pytestmark = pytest.mark.xdist_group("vllm_engine")
PROMPTS = [render_prompt(DEFAULT_PROMPT_TEMPLATE, r["problem"]) for r in make_problems(4, seed=0)] + ["hello", "x"]
SAMPLED = dict(n=3, temperature=1.0, max_new_tokens=24, seed=1)
GREEDY = dict(n=2, temperature=0.0, max_new_tokens=40, seed=0)
STOP_WORDS = ["</s>", "<|im_end|>", "<|endoftext|>", "\n\nQ:"]
# name -> (prompts, sampling arguments): all run on one engine, in one process.
CALLS = {
    "sampled": (PROMPTS, SAMPLED),
    "sampled_again": (PROMPTS, SAMPLED),
    "other_seed": (PROMPTS, {**SAMPLED, "seed": 2}),
    "reversed": (PROMPTS[::-1], SAMPLED),
    "subset": (PROMPTS[2:], SAMPLED),
    "repeated": ([PROMPTS[0], PROMPTS[0]], SAMPLED),
    "greedy": (PROMPTS, GREEDY),
    "greedy_other_seed": (PROMPTS, {**GREEDY, "n": 1, "seed": 5}),
    # the harness's stop words and the toy template's next-question marker (fpa.generation.stops)
    "greedy_stop_words": (PROMPTS, {**GREEDY, "stop": STOP_WORDS}),
}
# float32: dtype "auto" would run the float32 checkpoint in bfloat16, and
# greedy text would then differ from HFBackend's. enforce_eager: no
# torch.compile, which would cost minutes on 2 cores.
ENGINE = dict(dtype="float32", enforce_eager=True, max_model_len=256, kv_cache_memory_bytes=64 * 2**20)
DRIVER = """
import json, sys
from fpa.generation.vllm import VLLMBackend
if __name__ == "__main__":
    spec = json.loads(open(sys.argv[1]).read())
    backend = VLLMBackend(spec["model_dir"], **spec["engine"])
    out = {name: [[c.to_json() for c in row] for row in backend.generate(prompts, **args)]
           for name, (prompts, args) in spec["calls"].items()}
    open(sys.argv[2], "w").write(json.dumps(out))
"""


def get_vllm_python() -> str:
    """The vLLM environment's python from FPA_VLLM_PYTHON; skips without one (fails under CI=true)."""
    path = os.environ.get("FPA_VLLM_PYTHON", "")
    if path and os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    problem = f"FPA_VLLM_PYTHON={path!r} is not an executable file" if path else "FPA_VLLM_PYTHON is not set"
    reason = f"{problem}: create the vLLM env with `.ci/install-vllm DIR`, then FPA_VLLM_PYTHON=DIR/bin/python"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true needs the vLLM backend tested: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def vllm_python() -> str:
    return get_vllm_python()


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A random Qwen2 with head_dim 64 (vLLM's CPU attention needs it) and the toy tokenizer.

    initializer_range 0.1 (not 0.02) spreads the logits, so greedy steps have no
    near-ties that last-bit differences between the two engines could flip, and
    its completions differ from prompt to prompt. Their bytes are mostly not
    UTF-8, which also checks that both backends decode them alike.
    """
    out = tmp_path_factory.mktemp("models") / "qwen2-random"
    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, head_dim=64, max_position_embeddings=256,
                         initializer_range=0.1, tie_word_embeddings=True, bos_token_id=None,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    Qwen2ForCausalLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def vllm_out(vllm_python, model_dir, tmp_path_factory):
    """Completions of every call in ``CALLS``, from one vLLM engine in the vLLM environment."""
    work = tmp_path_factory.mktemp("vllm")
    spec, out = work / "spec.json", work / "out.json"
    spec.write_text(json.dumps({"model_dir": str(model_dir), "engine": ENGINE, "calls": CALLS}))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",  # engine in the driver process: saves two ~25 s imports
        "VLLM_CPU_OMP_THREADS_BIND": "nobind",  # do not pin threads to cores shared with other jobs
    }
    proc = subprocess.run([vllm_python, "-c", DRIVER, str(spec), str(out)], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"vLLM driver exited {proc.returncode}; its output ends:\n{(proc.stdout + proc.stderr)[-4000:]}")
    return {name: [[Completion.from_json(c) for c in row] for row in rows]
            for name, rows in json.loads(out.read_text()).items()}


@pytest.fixture(scope="module")
def hf_greedy(model_dir):
    return HFBackend(model_dir, batch_size=4).generate(PROMPTS, **GREEDY)


def test_registered_and_importable_without_vllm():
    assert BACKENDS["vllm"] == "fpa.generation.vllm:VLLMBackend"
    # the option checks run before vLLM is imported, so they work in any environment
    with pytest.raises(ValueError, match="tensor_parallel_size: expected >= 1, got 0"):
        get_backend("vllm", "unused", tensor_parallel_size=0)
    with pytest.raises(ValueError, match="batch_size"):
        get_backend("vllm", "unused", batch_size=0)


def test_n_completions_per_prompt_in_the_hf_format(vllm_out, hf_greedy):
    for name, (prompts, args) in CALLS.items():
        out = vllm_out[name]
        assert type(out) is list and len(out) == len(prompts), name
        assert all(type(c) is list and len(c) == args["n"] for c in out), name
        assert all(len(t.text) <= args["max_new_tokens"] for c in out for t in c), name  # 1 byte/token
    texts = [t.text for c in vllm_out["sampled"] for t in c]
    assert not any("<|endoftext|>" in t for t in texts)
    assert len(set(texts)) > len(PROMPTS)  # sampled, not greedy
    assert [[type(t) for t in c] for c in vllm_out["greedy"]] == [[type(t) for t in c] for c in hf_greedy]


def test_deterministic_for_a_seed_and_independent_of_batching(vllm_out):
    out = vllm_out["sampled"]
    assert vllm_out["sampled_again"] == out
    assert vllm_out["other_seed"] != out
    assert vllm_out["reversed"][::-1] == out
    assert vllm_out["subset"] == out[2:]
    assert vllm_out["repeated"][0] == out[0] and vllm_out["repeated"][1] != out[0]


def test_temperature_zero_is_hf_greedy(vllm_out, hf_greedy, model_dir):
    out = vllm_out["greedy"]
    assert all(c[0] == c[1] for c in out)
    assert vllm_out["greedy_other_seed"] == [[c[0]] for c in out]
    assert out == hf_greedy, f"vLLM {out}\nHF   {hf_greedy}"
    assert len({c[0] for c in out}) == len(PROMPTS)  # the comparison is not trivial
    # stop words: the same cut and finish reason as HFBackend's
    stopped = HFBackend(model_dir, batch_size=4).generate(PROMPTS, **GREEDY, stop=STOP_WORDS)
    assert vllm_out["greedy_stop_words"] == stopped


CURVE_DRIVER = """
import json, sys
from fpa.generation.backend import Engine
from fpa.generation.vllm import VLLMBackend
if __name__ == "__main__":
    spec = json.loads(open(sys.argv[1]).read())
    built = []
    def build(model_dir, **options):
        built.append(model_dir)
        return VLLMBackend(model_dir, **options)
    engine = Engine(build)
    out = [[[c.to_json() for c in row]
            for row in engine.on(model, **spec["engine"]).generate(spec["prompts"], **spec["greedy"])]
           for model in spec["snapshots"]]
    open(sys.argv[2], "w").write(json.dumps({"built": built, "completions": out}))
"""


def test_one_engine_samples_each_snapshot_of_a_curve(vllm_python, model_dir, tmp_path):
    """A curve of three snapshots on one real vLLM engine (``Engine``: built once, each later snapshot
    loaded in place by ``VLLMBackend.load_weights``): each snapshot's greedy completions are HFBackend's
    on that snapshot, so the weights were swapped, not kept. The model ties its head to its embeddings:
    vLLM 0.32.0's reload alone left the CPU build's packed head on the first snapshot, and the
    completions came from neither (``CheckpointReload``)."""
    snapshots = [str(model_dir)]
    for seed in (1, 2):
        other = tmp_path / f"snapshot-{seed}"
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM.from_pretrained(model_dir)
        for parameter in model.parameters():
            parameter.data.normal_(0.0, 0.1)
        model.save_pretrained(other)
        build_tokenizer().save_pretrained(other)
        snapshots.append(str(other))
    spec, out = tmp_path / "spec.json", tmp_path / "out.json"
    spec.write_text(json.dumps({"snapshots": snapshots, "engine": ENGINE, "prompts": PROMPTS, "greedy": GREEDY}))
    env = {**os.environ, "PYTHONPATH": str(SRC), "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
           "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
    proc = subprocess.run([vllm_python, "-c", CURVE_DRIVER, str(spec), str(out)], env=env, capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"vLLM curve driver exited {proc.returncode}; its output ends:\n"
                    f"{(proc.stdout + proc.stderr)[-4000:]}")
    result = json.loads(out.read_text())
    assert result["built"] == [str(model_dir)]
    completions = [[[Completion.from_json(c) for c in row] for row in each] for each in result["completions"]]
    expected = [HFBackend(snapshot, batch_size=4).generate(PROMPTS, **GREEDY) for snapshot in snapshots]
    assert completions == expected
    assert len({json.dumps([[c.text for c in row] for row in each]) for each in expected}) == 3
