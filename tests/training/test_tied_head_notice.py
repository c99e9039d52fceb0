"""A checkpoint of a model with tied embeddings logs no "Removed shared tensor" warning; any other
shared tensor still does."""

import logging

from fpa.training.parallel import _TiedHeadNotice


def _passes(message: str) -> bool:
    return _TiedHeadNotice().filter(logging.LogRecord("accelerate.utils.other", logging.WARNING, "", 0, message,
                                                      None, None))


def test_only_the_tied_head_is_silenced():
    tail = " while saving. This should be OK, but check by verifying that you don't receive any warning while reloading"
    assert not _passes("Removed shared tensor {'lm_head.weight'}" + tail)
    assert not _passes("Removed shared tensor {'module.lm.lm_head.weight'}" + tail)
    assert _passes("Removed shared tensor {'lm_head.weight', 'model.layers.0.mlp.up_proj.weight'}" + tail)
    assert _passes("saving the optimizer state")


def test_a_tied_model_checkpoint_logs_no_warning(tmp_path, caplog):
    import torch
    from accelerate import Accelerator
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from fpa.training.parallel import save_accelerate_state

    config = Qwen2Config(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=True)
    accelerator = Accelerator(cpu=True)
    model = Qwen2ForCausalLM(config)
    model, _ = accelerator.prepare(model, torch.optim.AdamW(model.parameters()))
    with caplog.at_level(logging.WARNING):
        accelerator.save_state(str(tmp_path / "plain"))
    assert "Removed shared tensor" in caplog.text  # what a user saw in every training log
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        save_accelerate_state(accelerator, tmp_path / "ours")
    assert "Removed shared tensor" not in caplog.text
    assert (tmp_path / "ours" / "model.safetensors").is_file()
