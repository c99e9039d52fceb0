import pytest

from fpa.generation.backend import BACKENDS, GenerationBackend, get_backend
from fpa.samples.prompts import render_prompt
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE, make_problems

PROMPTS = [render_prompt(DEFAULT_PROMPT_TEMPLATE, r["problem"]) for r in make_problems(4, seed=0)]
ARGS = dict(n=3, temperature=0.7, max_new_tokens=12, seed=1)


@pytest.fixture(scope="module")
def backend(micro_model_dir):
    return get_backend("hf", micro_model_dir, batch_size=5, threads=1)


def test_registry_and_protocol(backend):
    assert "hf" in BACKENDS and isinstance(backend, GenerationBackend)
    with pytest.raises(ValueError, match="'hf'"):
        get_backend("nope", "unused")


def test_n_completions_per_prompt_without_prompt_or_eos(backend):
    out = backend.generate(PROMPTS, **ARGS)
    assert len(out) == len(PROMPTS) and all(len(c) == 3 for c in out)
    texts = [c.text for row in out for c in row]
    assert all(isinstance(t, str) and len(t) <= 12 for t in texts)
    assert not any("Q:" in t or backend.tokenizer.eos_token in t for t in texts)
    assert len(set(texts)) > 1  # sampled, not greedy
    # each ended at its eos or at the 12-token limit, and says which
    assert {(c.finish_reason, c.stop) for row in out for c in row} <= {("length", None),
                                                                       ("stop", backend.tokenizer.eos_token)}


def test_deterministic_for_a_seed_and_independent_of_batching(backend):
    out = backend.generate(PROMPTS, **ARGS)
    assert backend.generate(PROMPTS, **ARGS) == out
    assert backend.generate(PROMPTS[::-1], **ARGS)[::-1] == out
    assert backend.generate(PROMPTS[2:], **ARGS) == out[2:]
    assert backend.generate(PROMPTS, **{**ARGS, "seed": 2}) != out
    backend.batch_size, size = 1, backend.batch_size
    try:
        assert backend.generate(PROMPTS, **ARGS) == out
    finally:
        backend.batch_size = size


def test_repeated_prompts_get_different_samples(backend):
    out = backend.generate([PROMPTS[0], PROMPTS[0]], **ARGS)
    assert out[0] != out[1]


def test_temperature_zero_is_greedy(backend):
    out = backend.generate(PROMPTS[:2], n=2, temperature=0.0, max_new_tokens=12, seed=0)
    assert all(c[0] == c[1] for c in out)
    assert backend.generate(PROMPTS[:2], n=1, temperature=0.0, max_new_tokens=12, seed=5) == [[c[0]] for c in out]


def test_argument_checks(backend):
    with pytest.raises(ValueError, match="temperature"):
        backend.generate(PROMPTS, n=1, temperature=-1.0, max_new_tokens=4, seed=0)
    with pytest.raises(ValueError, match="n: expected >= 1"):
        backend.generate(PROMPTS, n=0, temperature=1.0, max_new_tokens=4, seed=0)
