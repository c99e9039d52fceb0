"""A chat template that writes today's date (Llama 3.2's, through ``strftime_now``) renders the same
prompts on any day: the date is the config's (``models.<name>.chat_date``)."""

from __future__ import annotations

import datetime as real_datetime

import pytest

from fpa.evaluation.sampling import make_prompts
from fpa.samples.prompts import CHAT_DATE

# the date lines of Llama-3.2-Instruct's chat template, around one user turn
LLAMA_DATE_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if not date_string is defined %}{%- if strftime_now is defined %}"
    "{%- set date_string = strftime_now('%d %b %Y') %}{%- else %}{%- set date_string = '26 Jul 2024' %}"
    "{%- endif %}{%- endif %}"
    "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
    "Today Date: {{ date_string }}\n\n<|eot_id|>"
    "{%- for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
    "{{ message['content'] | trim }}<|eot_id|>{%- endfor %}"
    "{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{%- endif %}"
)


@pytest.fixture
def dated_model_dir(tmp_path, toy_model_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(toy_model_dir)
    tokenizer.chat_template = LLAMA_DATE_TEMPLATE
    tokenizer.save_pretrained(tmp_path)
    return tmp_path


def _on_day(monkeypatch, day: real_datetime.datetime) -> None:
    """Make the chat template's clock (``strftime_now``) read ``day``."""
    import transformers.utils.chat_template_utils as chat_utils

    class Clock(real_datetime.datetime):
        @classmethod
        def now(cls, tz=None):
            return day

    monkeypatch.setattr(chat_utils, "datetime", Clock)


def test_prompts_are_the_same_on_two_days(monkeypatch, dated_model_dir):
    config = {"prompt_template": "Q: {problem}\nA:", "chat_template": True}
    days = [real_datetime.datetime(2026, 11, 27), real_datetime.datetime(2027, 3, 1)]
    rendered = []
    for day in days:
        _on_day(monkeypatch, day)
        rendered.append(make_prompts(config, ["1+2"], str(dated_model_dir)))
    assert rendered[0] == rendered[1]
    assert f"Today Date: {CHAT_DATE}\n" in rendered[0][0]
    pinned = make_prompts({**config, "chat_date": "01 Jan 2025"}, ["1+2"], str(dated_model_dir))
    assert "Today Date: 01 Jan 2025\n" in pinned[0]


def test_the_clock_is_what_the_template_reads_without_a_pinned_date(monkeypatch, dated_model_dir):
    """The check above could not fail if the template never read the patched clock."""
    from transformers import AutoTokenizer

    _on_day(monkeypatch, real_datetime.datetime(2027, 3, 1))
    tokenizer = AutoTokenizer.from_pretrained(dated_model_dir)
    text = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False)
    assert "Today Date: 01 Mar 2027\n" in text


def test_the_pinned_date_is_in_the_sampling_slice_of_a_chat_model_only():
    """The date is part of what a chat model's sampling jobs depend on; a plain model's slice is unchanged."""
    import json
    from pathlib import Path

    import yaml

    from fpa.planning import judge_config

    config = yaml.safe_load((Path(__file__).resolve().parents[2] / ".test/config_ci/config.yaml").read_text())
    config["models"] = {"chat": {"source": "toy"}, "plain": {"source": "toy"}}
    plan = judge_config(config, "cfg.yaml")
    # a toy model has no chat template (the judge refuses one: tests/planning/test_feasible.py); the slice
    # is the same function for a hub model that has one
    plan.config["models"]["chat"]["chat_template"] = True
    assert json.loads(plan.sampling_config("chat"))["chat_date"] == CHAT_DATE
    assert "chat_date" not in json.loads(plan.sampling_config("plain"))
