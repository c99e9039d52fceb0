"""The HF backend's decoding loop: a preallocated KV cache and continuous batching.

``model.generate`` decodes a fixed batch until its longest row stops, grows its cache by
``torch.cat`` every step and attends over the whole padded batch. This loop allocates a
cache of ``slots`` rows once and

  * attends over the filled length only (the longest live row, not the cache's capacity:
    a static cache attending over its full length was slower);
  * drops a row as soon as it stops, and refills free slots with waiting prompts, ``refill``
    or more at a time in one batched prefill, so that steps work on live rows only;
  * keeps the live rows in the leading slots (the last live row takes a finished row's slot
    once no prompt waits), so a step reads the cache as one strided view.

The model's own modules compute each forward (``model.model`` with this cache as its
``past_key_values`` and prepared 4-D masks, then ``lm_head`` on each row's last token), so any
decoder whose layers call ``past_key_values.update`` works: the toy model is a Qwen2, the
rehearsal's (config/paper-rehearsal.yaml) Qwen3, Qwen2 and Llama. A
prompt sits at positions 0.. of its slot, so a row's positions, keys and logits are those
of its prompt decoded alone, up to the last bits of batched kernels; its token is drawn
from its own generator (``SlotSampler``), so what a row gets does not depend on its slot,
its neighbours or when it was admitted.
"""

from __future__ import annotations

from collections import deque
from typing import Sequence

import torch

from fpa.progress import progress

#: Exp(1) noise is drawn ahead for blocks of at most this many steps and floats (slots x steps x
#: vocabulary): few generator calls per row, and little noise drawn for steps after a row stopped.
NOISE_BLOCK_STEPS = 32
NOISE_BLOCK_FLOATS = 1 << 24


class SlotCache:
    """Keys and values of ``slots`` rows, ``[layers, slots x capacity, kv heads, head dim]``.

    The model calls ``update(keys, values, layer)`` in each attention layer. A prefill writes
    its rows' keys at positions 0.. of their slots and attends among them only (a new row has
    no past); a decode step writes each live row's key at the row's own position and attends
    over ``[:filled]`` of the leading live slots. Positions are the outer dimension so that a
    write is one ``index_copy_`` of whole positions (an advanced-index write of [rows, heads,
    dim] at per-row positions cost a tenth of each step).
    """

    def __init__(self, config, slots: int, capacity: int, dtype: torch.dtype, device: torch.device):
        head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
        shape = (config.num_hidden_layers, slots * capacity, config.num_key_value_heads, head_dim)
        self.keys = torch.zeros(shape, dtype=dtype, device=device)
        self.values = torch.zeros(shape, dtype=dtype, device=device)
        self.slots, self.capacity = slots, capacity
        self._index: torch.Tensor | None = None  # flat (slot, position) of each key written now
        self._live = self._filled = 0  # 0: a prefill

    def prepare_prefill(self, slots: torch.Tensor, width: int) -> None:
        positions = torch.arange(width, device=slots.device)
        self._index, self._filled = (slots[:, None] * self.capacity + positions).flatten(), 0

    def prepare_decode(self, positions: torch.Tensor) -> None:
        self._live, self._filled = len(positions), int(positions.max()) + 1
        self._index = torch.arange(self._live, device=positions.device) * self.capacity + positions

    def update(self, keys: torch.Tensor, values: torch.Tensor, layer: int, *args, **kwargs):
        heads, dim = keys.shape[1], keys.shape[3]
        self.keys[layer].index_copy_(0, self._index, keys.transpose(1, 2).reshape(-1, heads, dim))
        self.values[layer].index_copy_(0, self._index, values.transpose(1, 2).reshape(-1, heads, dim))
        if not self._filled:
            return keys, values
        return self._view(self.keys[layer]), self._view(self.values[layer])

    def _view(self, cache: torch.Tensor) -> torch.Tensor:
        """[live, heads, filled, dim] of the flat cache of one layer."""
        rows = cache.view(self.slots, self.capacity, *cache.shape[1:])
        return rows[:self._live, :self._filled].transpose(1, 2)

    def move(self, source: list[int], target: list[int], filled: int) -> None:
        for cache in (self.keys, self.values):
            rows = cache.view(cache.shape[0], self.slots, self.capacity, *cache.shape[2:])
            rows[:, target, :filled] = rows[:, source, :filled]


class SlotSampler:
    """Tokens from softmax(logits / T), each slot's row drawing from its own generator.

    A row's token is exactly ``torch.multinomial(p, 1, generator=row's)``'s draw: for one
    sample, ATen computes that as argmax(p / q), q ~ Exp(1) drawn from the generator over the
    vocabulary (Gumbel-max; ``Distributions.cpp``), and a generator's Exp(1) stream does not
    depend on how it is split into calls. So each row draws the noise of a block of steps in
    one call, and a step is one batched division and argmax. ``temperature == 0``: argmax of
    the logits.
    """

    def __init__(self, slots: int, vocabulary: int, temperature: float):
        self.temperature = temperature
        self.block = max(1, min(NOISE_BLOCK_STEPS, NOISE_BLOCK_FLOATS // (slots * vocabulary)))
        self.noise = torch.empty(slots, self.block, vocabulary) if temperature > 0 else None
        self.used = [self.block] * slots  # steps of its block a slot's row has consumed
        self.generators: list[torch.Generator | None] = [None] * slots

    def admit(self, slot: int, seed: int | None) -> None:
        self.generators[slot] = None if seed is None else torch.Generator().manual_seed(seed)
        self.used[slot] = self.block

    def move(self, source: list[int], target: list[int]) -> None:
        """Slot ``source[i]``'s row to ``target[i]`` (disjoint lists: live rows move below the live count)."""
        for s, t in zip(source, target):
            self.generators[t], self.used[t] = self.generators[s], self.used[s]
        if self.noise is not None:
            self.noise[target] = self.noise[source]

    def draw(self, logits: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        """One token per row of ``logits`` [rows, vocabulary], the rows of ``slots``."""
        if self.noise is None:
            return torch.argmax(logits, dim=-1).cpu()
        slot_list = slots.tolist()
        for slot in slot_list:
            if self.used[slot] == self.block:
                self.noise[slot].exponential_(1, generator=self.generators[slot])
                self.used[slot] = 0
        steps = torch.tensor([self.used[slot] for slot in slot_list])
        for slot in slot_list:
            self.used[slot] += 1
        probs = torch.softmax(logits.float() / self.temperature, dim=-1).cpu()
        return torch.argmax(probs / self.noise[slots, steps], dim=-1)


class SlotDecoder:
    """Sampled completions of many rows with ``slots`` rows decoding at a time.

    ``model``: an HF causal LM (eval mode); ``stop_ids``: a row stops at any of them, kept as its
    last token (so that the caller knows why it ended: a row without one reached max_new_tokens);
    ``refill``: admit waiting rows once this many slots are free (fewer when fewer wait), so a
    prefill's fixed cost is shared by several rows.
    """

    def __init__(self, model, *, slots: int, refill: int, stop_ids: set[int], pad_id: int):
        if slots < 1 or not 1 <= refill <= slots:
            raise ValueError(f"slots, refill: expected slots >= 1 and 1 <= refill <= slots, got {slots}, {refill}")
        layer_types = set(getattr(model.config, "layer_types", None) or ["full_attention"])
        if layer_types != {"full_attention"}:
            raise NotImplementedError(f"layer types {sorted(layer_types)}: the slot cache attends over every "
                                      f"position (no sliding window); use the vllm backend for this model")
        self.model, self.slots, self.refill = model, slots, refill
        self.stop_ids, self.pad_id = stop_ids, pad_id
        self.device = next(model.parameters()).device

    @torch.no_grad()
    def run(self, prompts: Sequence[list[int]], seeds: Sequence[int | None], *, temperature: float,
            max_new_tokens: int) -> list[list[int]]:
        """The generated ids of each prompt (``seeds[i]``: its generator's seed, None when greedy), up
        to and with the stop id that ended it, or ``max_new_tokens`` ids without one."""
        if not prompts:
            return []
        slots = min(self.slots, len(prompts))
        cache = SlotCache(self.model.config, slots, max(map(len, prompts)) + max_new_tokens,
                          self.model.dtype, self.device)
        sampler = SlotSampler(slots, self.model.config.vocab_size, temperature)
        waiting = deque(sorted(range(len(prompts)), key=lambda r: len(prompts[r])))
        row_of = [0] * slots  # the row each live slot decodes
        lengths = torch.zeros(slots, dtype=torch.long)  # tokens of the slot's row in the cache
        pending = torch.zeros(slots, dtype=torch.long)  # its next input token
        outputs: list[list[int]] = [[] for _ in prompts]
        live = 0
        bar = progress(len(prompts), "generate", unit="completion")
        while waiting or live:
            if waiting and (live == 0 or slots - live >= min(self.refill, len(waiting))):
                admitted = [waiting.popleft() for _ in range(min(slots - live, len(waiting)))]
                stepped = torch.arange(live, live + len(admitted))
                for slot, row in zip(stepped.tolist(), admitted):
                    row_of[slot] = row
                    sampler.admit(slot, seeds[row])
                lengths[stepped] = torch.tensor([len(prompts[row]) for row in admitted])
                logits = self._prefill(cache, [prompts[row] for row in admitted], stepped)
                live += len(admitted)
            else:
                stepped = torch.arange(live)
                logits = self._decode(cache, pending[:live], lengths[:live])
                lengths[:live] += 1
            tokens = sampler.draw(logits, stepped)
            pending[stepped] = tokens
            finished = []
            for slot, token in zip(stepped.tolist(), tokens.tolist()):
                generated = outputs[row_of[slot]]
                generated.append(token)
                if token in self.stop_ids or len(generated) == max_new_tokens:
                    finished.append(slot)
            live = self._release(finished, live, cache, sampler, row_of, lengths, pending)
            bar.update(len(finished))
        bar.close()
        return outputs

    def _prefill(self, cache: SlotCache, prompts: list[list[int]], slots: torch.Tensor) -> torch.Tensor:
        """Logits of each prompt's next token; its keys go to positions 0.. of its slot."""
        width = max(map(len, prompts))
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        for row, ids in enumerate(prompts):  # right padding: a pad follows every real token (causal)
            input_ids[row, :len(ids)] = torch.tensor(ids)
        positions = torch.arange(width).expand(len(prompts), width)
        cache.prepare_prefill(slots.to(self.device), width)
        # prepared 4-D masks, which every decoder's mask builder passes through as they are (Llama's
        # takes no per-layer-type dict); the prefill's keys are its own rows' only
        causal = torch.ones(width, width, dtype=torch.bool, device=self.device).tril()[None, None]
        hidden = self.model.base_model(input_ids=input_ids.to(self.device), position_ids=positions.to(self.device),
                                       attention_mask=causal, past_key_values=cache,
                                       use_cache=True).last_hidden_state
        last = torch.tensor([len(ids) - 1 for ids in prompts], device=self.device)
        return self.model.get_output_embeddings()(hidden[torch.arange(len(prompts), device=self.device), last])

    def _decode(self, cache: SlotCache, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """Logits after one more token of each live row, at its own position."""
        positions = positions.to(self.device)
        cache.prepare_decode(positions)
        visible = torch.arange(int(positions.max()) + 1, device=self.device) <= positions[:, None]
        hidden = self.model.base_model(input_ids=tokens[:, None].to(self.device), position_ids=positions[:, None],
                                       attention_mask=visible[:, None, None, :],
                                       past_key_values=cache, use_cache=True).last_hidden_state
        return self.model.get_output_embeddings()(hidden[:, 0])

    @staticmethod
    def _release(finished: list[int], live: int, cache: SlotCache, sampler: SlotSampler, row_of: list[int],
                 lengths: torch.Tensor, pending: torch.Tensor) -> int:
        """Free the ``finished`` slots; the last live rows move into those below the new live count."""
        if not finished:
            return live
        remaining = live - len(finished)
        gone = set(finished)
        holes = sorted(slot for slot in gone if slot < remaining)
        movers = [slot for slot in range(remaining, live) if slot not in gone]
        if holes:
            cache.move(movers, holes, int(lengths[movers].max()))
            sampler.move(movers, holes)
            for source, target in zip(movers, holes):
                row_of[target] = row_of[source]
            lengths[holes], pending[holes] = lengths[movers], pending[movers]
        return remaining
