"""The gradient-entanglement pilot against plain autograd on a tiny model."""

from __future__ import annotations

import pytest
import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from fpa.analysis.entanglement import (answer_only, measure, measure_preference, pair_entanglement, select_pairs,
                                       variant_pair)
from fpa.analysis.preference_pairs import draw_pairs, pair_loaders, read_pairs
from fpa.toy.tokenizer import build_tokenizer

TOKENIZER = build_tokenizer()
PROMPT = "Q: 3+4-2+6\nA:"
CORRECT = " 3+4=7. 7-2=5. 5+6=11. The final answer is \\boxed{11}"
INCORRECT = " 3+4=7. 7-2=6. 6+6=12. The final answer is \\boxed{12}"


def tiny_model(tie: bool):
    torch.manual_seed(0)
    config = Qwen2Config(vocab_size=len(TOKENIZER), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=16, tie_word_embeddings=tie)
    return Qwen2ForCausalLM(config).double().eval()


def plain_score_function(model, prompt, completion, eos=True):
    """∇θ Σ_t log softmax(logits)[y_t] by plain autograd through the model's own full logits."""
    prompt_ids = TOKENIZER(prompt, add_special_tokens=False)["input_ids"]
    ids = prompt_ids + TOKENIZER(completion, add_special_tokens=False)["input_ids"] + [TOKENIZER.eos_token_id] * eos
    input_ids = torch.tensor([ids])
    logprobs = model(input_ids=input_ids).logits[0, :-1].log_softmax(-1)
    positions = torch.arange(len(prompt_ids) - 1, len(ids) - 1)
    logp = logprobs[positions, input_ids[0, positions + 1]].sum()
    model.zero_grad()
    logp.backward()
    return torch.cat([p.grad.reshape(-1).clone() for p in model.parameters()])


@pytest.mark.parametrize("tie", [False, True], ids=["untied", "tied"])
def test_cosine_and_norms_equal_plain_autograd(tie):
    model = tiny_model(tie)
    ours = pair_entanglement(model, TOKENIZER, PROMPT, (CORRECT, INCORRECT), max_length=256)
    g_w, g_l = plain_score_function(model, PROMPT, CORRECT), plain_score_function(model, PROMPT, INCORRECT)
    assert ours["norm_correct"] == pytest.approx(float(g_w.norm()), rel=1e-10)
    assert ours["norm_incorrect"] == pytest.approx(float(g_l.norm()), rel=1e-10)
    assert ours["cosine"] == pytest.approx(float(g_w @ g_l / (g_w.norm() * g_l.norm())), rel=1e-10)
    assert ours["tokens_correct"] == len(TOKENIZER(CORRECT, add_special_tokens=False)["input_ids"]) + 1


def test_answer_only_variant_keeps_the_answers_and_drops_the_trace():
    assert answer_only(CORRECT) == "\\boxed{11}"
    assert answer_only("no answer here") is None
    pair = ({"completion": CORRECT}, {"completion": INCORRECT})
    assert variant_pair(pair, "full") == (CORRECT, INCORRECT)
    assert variant_pair(pair, "answer_only") == ("\\boxed{11}", "\\boxed{12}")
    assert variant_pair(({"completion": CORRECT}, {"completion": "truncated"}), "answer_only") is None
    with pytest.raises(ValueError, match="variant"):
        variant_pair(pair, "short")


def test_pairs_take_one_correct_and_one_incorrect_of_mixed_problems_only():
    samples = [{"problem_id": pid, "correct": c, "completion": f"{pid}{i}", "prompt": pid}
               for pid, outcomes in (("a", [1, 0, 0]), ("b", [1, 1]), ("c", [0, 1]), ("d", [0]))
               for i, c in enumerate(outcomes)]
    pairs = select_pairs(samples, max_pairs=10, seed=0)
    assert sorted(w["problem_id"] for w, _ in pairs) == ["a", "c"]
    assert all(w["correct"] and not l["correct"] and w["problem_id"] == l["problem_id"] for w, l in pairs)
    assert select_pairs(samples, max_pairs=10, seed=0) == pairs
    assert len(select_pairs(samples, max_pairs=1, seed=0)) == 1


def test_measure_rows_cover_both_variants():
    model = tiny_model(True)
    pair = ({"problem_id": "p", "prompt": PROMPT, "completion": CORRECT, "correct": True},
            {"problem_id": "p", "prompt": PROMPT, "completion": INCORRECT, "correct": False})
    rows = measure(model, TOKENIZER, [pair], max_length=256)
    assert [row["variant"] for row in rows] == ["full", "answer_only"]
    assert rows[1]["tokens_correct"] < rows[0]["tokens_correct"]


def test_imdb_pairs_are_the_review_and_its_one_label_token_against_the_other():
    (preferred, dispreferred), = read_pairs("imdb", [{"text": "A fine film.", "label": 1}])
    assert preferred["prompt"] == dispreferred["prompt"] == "Review: A fine film.\nSentiment:"
    assert (preferred["completion"], dispreferred["completion"]) == (" positive", " negative")
    assert not preferred["ends_answer"]
    with pytest.raises(ValueError, match="row 2: expected 'text' \\(string\\) and 'label' 0 or 1"):
        read_pairs("imdb", [{"text": "ok", "label": 0}, {"review": "no label"}])


def test_hh_pairs_share_the_dialogue_and_differ_in_the_last_reply():
    dialogue = "\n\nHuman: Hi\n\nAssistant: Hello\n\nHuman: Help me?\n\nAssistant:"
    rows = [{"chosen": dialogue + " Sure, here is how.", "rejected": dialogue + " No."},
            {"chosen": "\n\nHuman: A\n\nAssistant: x", "rejected": "\n\nHuman: B\n\nAssistant: y"},  # other prompt
            {"chosen": dialogue + " Same", "rejected": dialogue + " Same"}]
    (preferred, dispreferred), = read_pairs("hh_rlhf", rows)
    assert preferred["prompt"] == dialogue and preferred["ends_answer"]
    assert (preferred["completion"], dispreferred["completion"]) == (" Sure, here is how.", " No.")
    with pytest.raises(ValueError, match="loader: expected one of \\['hh_rlhf', 'imdb'\\], got 'math'"):
        read_pairs("math", rows)


def test_drawn_pairs_are_seeded_and_errors_name_the_file(tmp_path):
    path = tmp_path / "imdb.jsonl"
    path.write_text("".join(f'{{"text": "review {i}", "label": {i % 2}}}\n' for i in range(20)))
    assert draw_pairs("imdb", str(path), max_pairs=5, seed=3) == draw_pairs("imdb", str(path), max_pairs=5, seed=3)
    assert len(draw_pairs("imdb", str(path), max_pairs=50, seed=3)) == 20
    path.write_text('{"chosen": 1}\n')
    with pytest.raises(ValueError, match=f"{path}: row 1: expected 'chosen' and 'rejected'"):
        draw_pairs("hh_rlhf", str(path), max_pairs=5, seed=3)


def test_a_label_token_pair_is_one_token_each_and_matches_plain_autograd():
    model = tiny_model(False)
    pairs = read_pairs("imdb", [{"text": "good", "label": 1}, {"text": "x" * 300, "label": 0}])
    rows = measure_preference(model, TOKENIZER, "imdb", pairs, max_length=64)  # the long review does not fit
    assert [(row["variant"], row["problem_id"]) for row in rows] == [("imdb", "imdb-0")]
    # the toy tokenizer is byte-level: " positive" is 9 tokens, and no EOS follows the label
    assert rows[0]["tokens_correct"] == len(" positive") and rows[0]["tokens_incorrect"] == len(" negative")
    prompt = pairs[0][0]["prompt"]
    g_w = plain_score_function(model, prompt, " positive", eos=False)
    g_l = plain_score_function(model, prompt, " negative", eos=False)
    assert rows[0]["cosine"] == pytest.approx(float(g_w @ g_l / (g_w.norm() * g_l.norm())), rel=1e-10)


def test_the_config_names_preference_files_of_the_catalog_only():
    catalog = {"preference": {"imdb": {"loader": "imdb", "path": "imdb/train.jsonl"},
                              "math_step_dpo": {"loader": "step_dpo", "path": "step_dpo/train.jsonl"}},
               "benchmarks": {"math500": {"loader": "math500", "path": "math500/test.jsonl"}}}
    assert pair_loaders(["imdb"], catalog) == {"imdb": "imdb"}
    with pytest.raises(ValueError, match="entanglement.preference: unknown catalog entry 'hh'; expected one of"):
        pair_loaders(["hh"], catalog)
    for name, got in (("math500", "section 'benchmarks', loader 'math500'"),
                      ("math_step_dpo", "section 'preference', loader 'step_dpo'")):
        with pytest.raises(ValueError, match=f"entanglement.preference: '{name}': expected an entry .* got {got}"):
            pair_loaders([name], catalog)
