"""Stop words as the paper's harness (Qwen2.5-Math evaluation/math_eval.py) has them: a completion
that runs on into a new question is cut where the harness cuts it, graded on its first answer, and
records why it ended; one cut at the length limit ends without EOS in training."""

from __future__ import annotations

import pytest

from fpa.evaluation.evaluate import score_completions
from fpa.generation import decode
from fpa.generation.hf import HFBackend
from fpa.generation.stops import Completion, cut_at_stop, question_stop, read_completions, stop_words
from fpa.grading import get_grader
from fpa.samples.prompts import PAPER_MATH_TEMPLATE
from fpa.samples.tokenize import encode_record
from fpa.toy.task import DEFAULT_PROMPT_TEMPLATE

HARNESS = ["</s>", "<|im_end|>", "<|endoftext|>"]  # math_eval.py's stop words of every prompt type
RUN_ON = (" 1 + 2 = 3, so the final answer is \\boxed{3}.\n\nQ: What is 3 + 4?\n\n"
          "A: 3 + 4 = 7. The final answer is \\boxed{7}.")


def test_the_next_question_marker_comes_from_the_template():
    assert question_stop(PAPER_MATH_TEMPLATE) == "\n\nQ:"
    assert question_stop("Question: {problem}\nAnswer: ") == "\n\nQuestion:"  # the harness's cot prompt
    assert question_stop(DEFAULT_PROMPT_TEMPLATE) == "\n\nQ:"
    assert question_stop("{problem}") is None
    assert stop_words(PAPER_MATH_TEMPLATE, HARNESS) == [*HARNESS, "\n\nQ:"]


def test_cut_before_the_first_stop_word_of_any():
    assert cut_at_stop("a<|im_end|>b\n\nQ: c", ["\n\nQ:", "<|im_end|>"]) == ("a", "<|im_end|>")
    assert cut_at_stop("no stop here", HARNESS) == ("no stop here", None)


@pytest.fixture(scope="module")
def backend(micro_model_dir):
    return HFBackend(micro_model_dir, batch_size=4, threads=1)


def _scripted(monkeypatch, backend, text: str, eos: bool):
    """The decoder draws the token ids of ``text`` (and eos): the rest of the backend is the real one."""
    ids = backend.tokenizer(text, add_special_tokens=False)["input_ids"]
    ids += [backend.tokenizer.eos_token_id] if eos else []

    def run(self, prompts, seeds, *, temperature, max_new_tokens):
        return [ids[:max_new_tokens] for _ in prompts]

    monkeypatch.setattr(decode.SlotDecoder, "run", run)


def test_a_completion_that_runs_on_into_a_new_question_is_cut_and_graded_on_its_first_answer(monkeypatch, backend):
    _scripted(monkeypatch, backend, RUN_ON, eos=True)
    stops = stop_words(PAPER_MATH_TEMPLATE, HARNESS)
    prompt = PAPER_MATH_TEMPLATE.replace("{problem}", "What is 1 + 2?")
    [[completion]] = backend.generate([prompt], n=1, temperature=0.0, max_new_tokens=200, seed=0, stop=stops)
    # math_eval.py: code.split("\n\nQuestion:")[0] for its prompt; here the template's "\n\nQ:"
    assert completion == Completion(" 1 + 2 = 3, so the final answer is \\boxed{3}.", "stop", "\n\nQ:")
    records = [{"id": "p", "answer": "3"}]
    assert score_completions(records, [[completion]], n=1, grader=get_grader("math"))["correct"] == [[1]]
    # without the stop word the grader reads the last \boxed{}: the next question's 7
    [[run_on]] = backend.generate([prompt], n=1, temperature=0.0, max_new_tokens=200, seed=0)
    assert run_on == Completion(RUN_ON, "stop", backend.tokenizer.eos_token)
    result = score_completions(records, [[run_on]], n=1, grader=get_grader("math"))
    assert result["correct"] == [[0]] and result["finish_reasons"] == [["stop"]]
    assert read_completions(result, "eval.json") == [[run_on]]


def test_a_completion_cut_at_the_length_limit_records_it_and_trains_without_eos(monkeypatch, backend):
    _scripted(monkeypatch, backend, RUN_ON[:30], eos=False)
    [[cut]] = backend.generate(["Q: 1 + 2?\nA:"], n=1, temperature=0.0, max_new_tokens=30, seed=0, stop=HARNESS)
    assert cut == Completion(RUN_ON[:30], "length", None)
    tokenizer, eos = backend.tokenizer, backend.tokenizer.eos_token_id
    record = {"prompt": "Q: 1 + 2?\nA:", "completion": cut.text}
    assert encode_record(tokenizer, {**record, "finish_reason": "length"}, 256).input_ids[-1] != eos
    assert encode_record(tokenizer, {**record, "finish_reason": "stop"}, 256).input_ids[-1] == eos


def test_a_stop_word_that_is_one_added_token_stops_as_a_token(backend):
    """As the harness's stop_token_ids: decoded with special tokens skipped, <|im_end|> would never
    show in the text. The toy tokenizer's eos is one added token: as a stop word it ends a sample."""
    eos = backend.tokenizer.eos_token
    out = backend.generate(["Q: 12 + 7\nA:"], n=4, temperature=1.0, max_new_tokens=12, seed=3, stop=[eos])
    plain = backend.generate(["Q: 12 + 7\nA:"], n=4, temperature=1.0, max_new_tokens=12, seed=3)
    assert out == plain  # the eos already stopped it: one stop, not two
