import random

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from fpa.io import read_json
from fpa.samples.prompts import PAPER_MATH_TEMPLATE
from fpa.toy.model import build_toy_model, get_batch, get_lr
from fpa.toy.settings import TOY_PRESETS, ToyModelConfig, toy_model_config, with_overrides
from fpa.toy.tokenizer import build_tokenizer

MICRO = ToyModelConfig(n_train_problems=50, d_model=64, n_heads=1, n_layers=1, d_ff=64, steps=3, batch_size=4, log_every=2)


def test_micro_model_loads_like_a_real_model(tmp_path):
    out = tmp_path / "toy"
    metrics = build_toy_model(out, MICRO)
    assert metrics["config"]["steps"] == 3 and len(metrics["loss_curve"]) == 2
    assert read_json(out / "metrics.json")["final_loss"] == metrics["final_loss"]
    assert (out / "model.safetensors").exists() and (out / "generation_config.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left

    model = AutoModelForCausalLM.from_pretrained(out)
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert type(model).__name__ == "Qwen2ForCausalLM" and model.config.head_dim == 64
    assert model.generation_config.eos_token_id == tokenizer.eos_token_id
    prompt = "Q: 1+2\nA: "
    assert tokenizer.decode(tokenizer(prompt)["input_ids"]) == prompt
    batch = tokenizer([prompt], return_tensors="pt", add_special_tokens=False)
    with torch.no_grad():
        logits = model(**batch).logits
    assert logits.shape == (1, batch["input_ids"].shape[1], len(tokenizer))


def test_same_seed_same_weights(tmp_path):
    a = build_toy_model(tmp_path / "a", MICRO)
    b = build_toy_model(tmp_path / "b", MICRO)
    assert a["loss_curve"] == b["loss_curve"]


def test_config_checks():
    with pytest.raises(ValueError, match="head_dim 64"):
        ToyModelConfig(d_model=100)
    with pytest.raises(ValueError, match="slip: unknown key"):
        with_overrides(MICRO, slip=0.1)
    assert with_overrides(MICRO, slip_rate=0.2).slip_rate == 0.2
    assert set(TOY_PRESETS) == {"default", "ci"}


def test_lr_schedule_warms_up_then_decays_to_a_tenth():
    cfg = ToyModelConfig(steps=100, warmup_steps=10, lr=1.0)
    lrs = [get_lr(step, cfg) for step in range(cfg.steps)]
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == pytest.approx(1.0)
    assert all(x >= y for x, y in zip(lrs[9:], lrs[10:]))
    assert lrs[-1] == pytest.approx(0.1, abs=1e-3)


def test_a_long_template_keeps_every_trace_whole():
    """The paper's math prompt (~190 bytes) must not cut the traces: each ends with its eos."""
    cfg = with_overrides(MICRO, prompt_template=PAPER_MATH_TEMPLATE, n_operands=8)
    tokenizer = build_tokenizer()
    batch = get_batch(["9+8-7+6-5+4-3+2"], cfg, tokenizer, random.Random(0))
    for labels in batch["labels"]:
        assert labels[labels != -100][-1] == tokenizer.eos_token_id


@pytest.mark.parametrize("overrides, message", [
    ({"n_layers": "2"}, "n_layers: expected integer, got '2'"),
    ({"n_layers": True}, "n_layers: expected integer, got True"),
    ({"n_layers": 0}, "n_layers: expected an integer 1 <= n_layers <= 2147483647, got 0"),
    ({"steps": 2**31}, "steps: expected an integer 1 <= steps <= 2147483647, got 2147483648"),
    ({"min_operands": None, "lr": 0}, "lr: expected number > 0, got 0"),
    ({"lr": "fast"}, "lr: expected number, got 'fast'"),
    ({"weight_decay": -0.1}, "weight_decay: expected number >= 0, got -0.1"),
    ({"min_operands": 1.5}, "min_operands: expected integer or null, got 1.5"),
    ({"prompt_template": 3}, "prompt_template: expected string, got 3"),
    ({"trace_style": "fancy"}, "trace_style: expected one of ['coda', 'marks', 'peaked', 'plain', 'varied'], got 'fancy'"),
])
def test_a_setting_the_build_cannot_use_is_refused_naming_it(overrides, message):
    with pytest.raises(ValueError) as error:
        with_overrides(MICRO, **overrides)
    assert str(error.value) == message


def test_the_presets_and_settings_a_config_names_build(tmp_path):
    """What fpa check-config accepts (toy_model_config) is what rule toy_base_model builds from."""
    cfg = toy_model_config({"preset": "ci", "steps": 2, "n_train_problems": 8, "batch_size": 4}, "Q: {problem}\nA:")
    assert (cfg.steps, cfg.n_operands, cfg.prompt_template) == (2, TOY_PRESETS["ci"].n_operands, "Q: {problem}\nA:")
    assert build_toy_model(tmp_path / "toy", cfg)["config"]["steps"] == 2
