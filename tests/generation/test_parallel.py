"""Data-parallel sampling: replicas' devices, the split of a call, and a 2-replica run equal to one backend."""

from __future__ import annotations

import pytest

from fpa.generation.parallel import DataParallelBackend, replica_devices, split_prompts


@pytest.mark.parametrize(("gpus", "tensor_parallel", "visible", "expected"), [
    (4, 1, None, ["0", "1", "2", "3"]),
    (4, 2, None, ["0,1", "2,3"]),
    (2, 1, "4,6", ["4", "6"]),  # SLURM's devices of the job, not the node's first ones
    (2, 2, "4,6", ["4,6"]),
])
def test_each_replica_gets_tensor_parallel_size_of_the_jobs_gpus(gpus, tensor_parallel, visible, expected):
    assert replica_devices(gpus, tensor_parallel, visible) == expected


def test_gpus_must_fill_whole_replicas():
    with pytest.raises(ValueError, match=r"gpus: expected a positive multiple of tensor_parallel_size \(2\), got 3"):
        replica_devices(3, 2)
    with pytest.raises(ValueError, match="the job asked for 2 GPUs, '0' shows 1"):
        replica_devices(2, 1, "0")


def test_shares_are_contiguous_and_count_earlier_occurrences():
    prompts = ["a", "b", "a", "c", "a"]
    shares = split_prompts(prompts, 2, offsets={"a": 3})
    assert shares == [(["a", "b"], {"a": 3}), (["a", "c", "a"], {"a": 4, "b": 1})]
    assert [p for share, _ in split_prompts(prompts, 3) for p in share] == prompts
    assert split_prompts(["a"], 2) == [([], {}), (["a"], {})]


def test_two_replicas_sample_what_one_backend_samples(micro_model_dir):
    from fpa.generation.backend import get_backend

    prompts = ["1+2=", "3+4=", "1+2=", "5+6=", "7+8="]
    sampling = dict(n=2, temperature=1.0, max_new_tokens=6, seed=11, offsets={"1+2=": 1})
    expected = get_backend("hf", micro_model_dir, batch_size=3, threads=1).generate(prompts, **sampling)
    backend = DataParallelBackend("hf", micro_model_dir, [None, None], batch_size=3, threads=1)
    try:
        assert backend.generate(prompts, **sampling) == expected
        with pytest.raises(ValueError, match="n: expected >= 1"):
            backend.generate(prompts, **{**sampling, "n": 0})
    finally:
        backend.close()


def test_replicas_load_another_checkpoint_into_their_engines(micro_model_dir, tmp_path):
    """``load_weights`` reaches every replica: replicas built on one checkpoint, given another of the
    same shapes, sample what a backend built on that other checkpoint samples."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from fpa.generation.backend import get_backend

    other = AutoModelForCausalLM.from_pretrained(micro_model_dir)
    torch.manual_seed(0)
    for parameter in other.parameters():
        parameter.data.add_(0.05 * torch.randn_like(parameter))
    other.save_pretrained(tmp_path / "other")
    AutoTokenizer.from_pretrained(micro_model_dir).save_pretrained(tmp_path / "other")
    prompts = ["1+2=", "3+4=", "5+6="]
    sampling = dict(n=2, temperature=1.0, max_new_tokens=6, seed=11)
    expected = get_backend("hf", tmp_path / "other", batch_size=3, threads=1).generate(prompts, **sampling)
    backend = DataParallelBackend("hf", micro_model_dir, [None, None], batch_size=3, threads=1)
    try:
        first = backend.generate(prompts, **sampling)
        backend.load_weights(tmp_path / "other")
        assert backend.generate(prompts, **sampling) == expected != first
    finally:
        backend.close()


def test_a_replica_that_cannot_start_fails_the_call(tmp_path):
    backend = DataParallelBackend("hf", tmp_path / "no-model", [None])
    try:
        with pytest.raises(RuntimeError, match="data-parallel replica failed: OSError"):
            backend.generate(["x"], n=1, temperature=0.0, max_new_tokens=1, seed=0)
    finally:
        backend.close()


def test_vllm_on_more_gpus_than_one_engine_runs_an_engine_per_group(monkeypatch):
    import fpa.generation.parallel as parallel
    from fpa.generation.parallel import make_backend

    started = []
    monkeypatch.setattr(parallel, "DataParallelBackend", lambda *args, **options: started.append((args, options)))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3,4,5")
    make_backend({"backend": "vllm", "tensor_parallel_size": 2}, "model", gpus=4, max_model_len=3000)
    assert started == [(("vllm", "model", ["2,3", "4,5"]), {"tensor_parallel_size": 2, "max_model_len": 3000})]
