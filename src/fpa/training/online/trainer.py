"""TRL's ``GRPOTrainer`` as the project runs it: prompts tokenised as everywhere else in the
project (no special tokens added: ``fpa.samples.tokenize``), and DAPO's dynamic sampling, which
TRL 1.16 lacks, as the one method it overrides to generate.

Dynamic sampling: after each generation round the groups whose G completions all got the same
reward are set aside; while some process has fewer informative groups than its batch holds,
every process generates another round from freshly drawn training prompts (rounds stay in
step across processes: TRL gathers rewards in each). The batch is then its informative groups,
topped up with set-aside groups (zero advantage) only when ``dynamic_sampling_rounds`` rounds
did not find enough; the metrics count both.
"""

from __future__ import annotations

import random

import torch
from trl import GRPOTrainer
from trl.data_utils import is_conversational

from fpa.training.online.groups import concat_batches, informative_groups, take_groups


class OnlineTrainer(GRPOTrainer):
    """``dynamic_sampling_rounds``: 0 for GRPO; the most generation rounds per batch for DAPO."""

    def __init__(self, *args, dynamic_sampling_rounds: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        self.dynamic_sampling_rounds = dynamic_sampling_rounds
        self._refill = random.Random(self.args.seed * 1_000 + self.accelerator.process_index)
        self._round_rewards: torch.Tensor | None = None

    def _tokenize_prompts(self, prompts: list):
        if is_conversational({"prompt": prompts[0]}):
            return super()._tokenize_prompts(prompts)
        return self.processing_class(text=prompts, add_special_tokens=False)["input_ids"], None, {}

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._round_rewards = rewards_per_func  # every process's rows: dynamic sampling reads its own
        return rewards_per_func

    def _generate_and_score_completions(self, inputs):
        if not self.dynamic_sampling_rounds or not self.model.training:
            return super()._generate_and_score_completions(inputs)
        size = self.num_generations
        if len(inputs) % size:
            raise ValueError(f"dynamic sampling: a process's generation batch of {len(inputs)} completions is not "
                             f"whole groups of G={size}")
        wanted = len(inputs) // size
        kept, spare, rounds = [], [], 0
        batch = inputs
        while True:
            output = super()._generate_and_score_completions(batch)
            rounds += 1
            signal = informative_groups(self._local_rewards(len(batch)), size)
            kept.append(take_groups(output, signal.nonzero().view(-1), size))
            spare.append(take_groups(output, (~signal).nonzero().view(-1), size))
            found = sum(part["advantages"].numel() for part in kept) // size
            short = torch.tensor(float(found < wanted), device=self.accelerator.device)
            if rounds >= self.dynamic_sampling_rounds or not self.accelerator.gather(short).any():
                break
            batch = self._draw_prompts(wanted)
        joined = concat_batches(kept + spare, self.processing_class.pad_token_id)
        joined = take_groups(joined, torch.arange(wanted), size)
        mask = joined["completion_mask"]
        joined["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
        self._metrics["train"]["dynamic_sampling/rounds"].append(float(rounds))
        self._metrics["train"]["dynamic_sampling/uniform_groups_kept"].append(float(max(wanted - found, 0)))
        return joined

    def _local_rewards(self, rows: int) -> torch.Tensor:
        """This process's rows of the last round's rewards, weighted over the reward functions as TRL weighs them."""
        start = self.accelerator.process_index * rows
        local = self._round_rewards[start:start + rows]
        return (local * self.reward_weights.to(local.device).unsqueeze(0)).nansum(dim=1)

    def _draw_prompts(self, groups: int) -> list[dict]:
        """``groups`` training prompts drawn at random, each repeated G times (as TRL's sampler repeats them)."""
        indices = self._refill.sample(range(len(self.train_dataset)), min(groups, len(self.train_dataset)))
        while len(indices) < groups:
            indices.append(self._refill.randrange(len(self.train_dataset)))
        return [self.train_dataset[index] for index in indices for _ in range(self.num_generations)]
