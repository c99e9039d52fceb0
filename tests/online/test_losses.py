"""GRPO's and DAPO's losses and advantages, as TRL computes them for the project, against the
paper's equations (appendix "RLVR Training") computed by hand in float64."""

from __future__ import annotations

import pytest
import torch
from online_helpers import make_trainer

from fpa.toy.task import make_problems

PROMPTS = [{"prompt": f"Q: {p['problem']}\nA:", "answer": p["answer"]} for p in make_problems(4, seed=0, n_operands=3)]


def _constant_reward(prompts, completions, **_):
    return [0.0] * len(completions)


def _batch(trainer, generator):
    """Two groups of G = 4 completions of uneven lengths, prompts left-padded, and old log-probs
    off the current ones by up to ±0.6 so that ratios fall on both sides of the clip range."""
    tokenizer = trainer.processing_class
    prompts = [tokenizer(row["prompt"], add_special_tokens=False)["input_ids"] for row in PROMPTS[:2]]
    width = max(map(len, prompts))
    prompt_ids = torch.tensor([[tokenizer.pad_token_id] * (width - len(p)) + p for p in prompts for _ in range(4)])
    prompt_mask = (torch.arange(width) >= torch.tensor([width - len(p) for p in prompts for _ in range(4)])[:, None])
    lengths = torch.tensor([7, 3, 5, 7, 2, 7, 6, 4])
    completion_ids = torch.randint(2, 60, (8, 7), generator=generator)
    completion_mask = (torch.arange(7)[None, :] < lengths[:, None]).long()
    rewards = torch.tensor([1.0, -1.0, -1.0, 1.0, -1.0, -1.0, -1.0, 1.0], dtype=torch.float64)
    return prompt_ids, prompt_mask.long(), completion_ids, completion_mask, rewards


def _hand_loss(model, batch, advantages, old, temperature, eps_low, eps_high, aggregation):
    """The paper's surrogate: −min(ρ Â, clip(ρ, 1 − ε_low, 1 + ε_high) Â) per token, with π_θ the
    temperature-scaled policy that sampled; "sequence" averages each completion's tokens then the
    completions (GRPO), "token" averages every token of the batch (DAPO)."""
    prompt_ids, prompt_mask, completion_ids, completion_mask = batch
    logits = model(input_ids=torch.cat([prompt_ids, completion_ids], 1),
                   attention_mask=torch.cat([prompt_mask, completion_mask], 1)).logits
    logits = logits[:, prompt_ids.size(1) - 1:-1].double() / temperature
    logp = torch.log_softmax(logits, -1).gather(-1, completion_ids[..., None]).squeeze(-1)
    ratio = torch.exp(logp - old)
    surrogate = -torch.minimum(ratio * advantages[:, None],
                               torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * advantages[:, None])
    mask = completion_mask.double()
    if aggregation == "sequence":
        return ((surrogate * mask).sum(1) / mask.sum(1)).mean(), logp, ratio
    return (surrogate * mask).sum() / mask.sum(), logp, ratio


@pytest.mark.parametrize("method, aggregation", [("grpo", "sequence"), ("dapo", "token")])
def test_loss_is_the_papers_equation(tmp_path, toy_model_dir, method, aggregation):
    trainer, hyper = make_trainer(toy_model_dir, tmp_path, method, PROMPTS, _constant_reward, dtype=torch.float64)
    generator = torch.Generator().manual_seed(0)
    prompt_ids, prompt_mask, completion_ids, completion_mask, rewards = _batch(trainer, generator)
    grouped = rewards.view(2, 4)
    advantages = ((grouped - grouped.mean(1, keepdim=True)) / grouped.std(1, keepdim=True)).view(-1)
    batch = (prompt_ids, prompt_mask, completion_ids, completion_mask)
    with torch.no_grad():
        _, current, _ = _hand_loss(trainer.model, batch, advantages, 0.0, hyper.temperature, 0, 0, aggregation)
    old = current + (torch.rand(current.shape, generator=generator, dtype=torch.float64) - 0.5) * 1.2
    inputs = {"prompt_ids": prompt_ids, "prompt_mask": prompt_mask, "completion_ids": completion_ids,
              "completion_mask": completion_mask, "advantages": advantages, "old_per_token_logps": old,
              "num_items_in_batch": completion_mask.sum()}
    loss = trainer._compute_loss(trainer.model, inputs)
    grad = torch.autograd.grad(loss, trainer.model.lm_head.weight)[0]
    expected, _, ratio = _hand_loss(trainer.model, batch, advantages, old, hyper.temperature, hyper.epsilon,
                                    hyper.epsilon_high, aggregation)
    expected_grad = torch.autograd.grad(expected, trainer.model.lm_head.weight)[0]
    live = completion_mask.bool()
    assert (ratio[live] < 1 - hyper.epsilon).any() and (ratio[live] > 1 + hyper.epsilon_high).any()
    # TRL's fused LM head computes the log-probs in float32 tiles: equal to float32 precision
    torch.testing.assert_close(loss.double(), expected, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(grad.double(), expected_grad, rtol=1e-4, atol=1e-6)


def _text_reward(prompts, completions, **_):
    """A reward of the completion's text alone (0, 1 or 2): groups get different rewards."""
    return [float(sum(map(ord, completion)) % 3) for completion in completions]


def test_advantages_are_group_normalised_rewards(tmp_path, toy_model_dir):
    trainer, hyper = make_trainer(toy_model_dir, tmp_path, "grpo", PROMPTS, _text_reward)
    rows = [row for row in PROMPTS for _ in range(hyper.num_generations)]
    output = trainer._generate_and_score_completions(rows)
    tokenizer = trainer.processing_class
    completions = [tokenizer.decode(ids[mask.bool()], skip_special_tokens=True)
                   for ids, mask in zip(output["completion_ids"], output["completion_mask"])]
    rewards = torch.tensor(_text_reward(None, completions), dtype=torch.float64).view(-1, hyper.num_generations)
    # Â_i = (r_i − mean_j r_j) / std_j r_j over the group (TRL: sample std, + 1e-4 against a zero std)
    expected = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-4)).view(-1)
    assert expected.abs().sum() > 0
    torch.testing.assert_close(output["advantages"].double(), expected, rtol=1e-5, atol=1e-5)
