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
with its own noise (``fpa.generation.samplers``), so what a row gets does not depend on its
slot, its neighbours or when it was admitted. Attention keeps grouped K/V grouped
(``fpa.generation.slot_attention``).

On a GPU the loop waits for the device once a step, for the step's token ids (8 bytes a row):
it needs them to stop rows and refill their slots. Everything else a step needs the host knows
without asking: each row's length is kept on the host too (``SlotRows``), so the attended length
comes from there, and indices go to the device without a wait (``samplers.to_device``).
The wait leaves the GPU idle while the host issues the next step (its Python and kernel
launches); checking stops every k steps would let the host run ahead, but each row would decode
up to k - 1 tokens past its stop and each refill would come up to k - 1 steps late. (CUDA graphs would take the launches off the host;
not done here.)
"""

from __future__ import annotations

from collections import deque
from typing import Sequence

import torch

from fpa.generation.samplers import check_noise, device_index, make_sampler, to_device
from fpa.generation.slot_attention import grouped_slot_attention
from fpa.progress import progress

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

    def prepare_decode(self, positions: torch.Tensor, filled: int) -> None:
        """``positions`` [live]: where each live row's key goes; ``filled``: 1 + their maximum (from the host)."""
        self._live, self._filled = len(positions), filled
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

    def move(self, source: torch.Tensor, target: torch.Tensor, filled: int) -> None:
        for cache in (self.keys, self.values):
            rows = cache.view(cache.shape[0], self.slots, self.capacity, *cache.shape[2:])
            rows[:, target, :filled] = rows[:, source, :filled]


class SlotRows:
    """Per slot: the row it decodes, that row's tokens in the cache (``lengths`` on the host,
    ``positions`` the same on the device) and its next input token (``pending``, on the device)."""

    def __init__(self, slots: int, device: torch.device):
        self.row_of = [0] * slots
        self.lengths = torch.zeros(slots, dtype=torch.long)
        self.positions = torch.zeros(slots, dtype=torch.long, device=device)
        self.pending = torch.zeros(slots, dtype=torch.long, device=device)

    def admit(self, first: int, rows: list[int], lengths: list[int]) -> None:
        self.row_of[first:first + len(rows)] = rows
        self.lengths[first:first + len(rows)] = torch.tensor(lengths)
        self.positions[first:first + len(rows)] = device_index(lengths, self.positions.device)

    def advance(self, live: int) -> None:
        self.lengths[:live] += 1
        self.positions[:live] += 1

    def move(self, source: list[int], target: list[int], source_index: torch.Tensor,
             target_index: torch.Tensor) -> None:
        for s, t in zip(source, target):
            self.row_of[t] = self.row_of[s]
        self.lengths[target] = self.lengths[source]
        self.positions[target_index] = self.positions[source_index]
        self.pending[target_index] = self.pending[source_index]


class SlotDecoder:
    """Sampled completions of many rows with ``slots`` rows decoding at a time.

    ``model``: an HF causal LM (eval mode); ``stop_ids``: a row stops at any of them, kept as its
    last token (so that the caller knows why it ended: a row without one reached max_new_tokens);
    ``refill``: admit waiting rows once this many slots are free (fewer when fewer wait), so a
    prefill's fixed cost is shared by several rows; ``noise``: the sampler's (``samplers.NOISES``).
    """

    def __init__(self, model, *, slots: int, refill: int, stop_ids: set[int], pad_id: int, noise: str = "auto"):
        if slots < 1 or not 1 <= refill <= slots:
            raise ValueError(f"slots, refill: expected slots >= 1 and 1 <= refill <= slots, got {slots}, {refill}")
        layer_types = set(getattr(model.config, "layer_types", None) or ["full_attention"])
        if layer_types != {"full_attention"}:
            raise NotImplementedError(f"layer types {sorted(layer_types)}: the slot cache attends over every "
                                      f"position (no sliding window); use the vllm backend for this model")
        self.model, self.slots, self.refill, self.noise = model, slots, refill, noise
        self.stop_ids, self.pad_id = stop_ids, pad_id
        self.device = next(model.parameters()).device
        check_noise(noise)

    @torch.no_grad()
    def run(self, prompts: Sequence[list[int]], seeds: Sequence[int | None], *, temperature: float,
            max_new_tokens: int) -> list[list[int]]:
        """The generated ids of each prompt (``seeds[i]``: its row's seed, None when greedy), up
        to and with the stop id that ended it, or ``max_new_tokens`` ids without one."""
        if not prompts:
            return []
        slots = min(self.slots, len(prompts))
        cache = SlotCache(self.model.config, slots, max(map(len, prompts)) + max_new_tokens,
                          self.model.dtype, self.device)
        sampler = make_sampler(self.noise, slots, self.model.config.vocab_size, temperature, self.device)
        waiting = deque(sorted(range(len(prompts)), key=lambda r: len(prompts[r])))
        state = SlotRows(slots, self.device)
        outputs: list[list[int]] = [[] for _ in prompts]
        live = 0
        bar = progress(len(prompts), "generate", unit="completion")
        with grouped_slot_attention(self.model):
            while waiting or live:
                if waiting and (live == 0 or slots - live >= min(self.refill, len(waiting))):
                    admitted = [waiting.popleft() for _ in range(min(slots - live, len(waiting)))]
                    first, last = live, live + len(admitted)
                    state.admit(first, admitted, [len(prompts[row]) for row in admitted])
                    sampler.admit(first, [seeds[row] for row in admitted])
                    logits = self._prefill(cache, [prompts[row] for row in admitted], first)
                    live = last
                else:
                    first, last = 0, live
                    logits = self._decode(cache, state.pending[:live], state.positions[:live],
                                          int(state.lengths[:live].max()) + 1)
                    state.advance(live)
                tokens = sampler.draw(logits, first, last)
                state.pending[first:last] = tokens
                finished = []
                for slot, token in enumerate(tokens.tolist(), first):  # the step's one wait for the device
                    generated = outputs[state.row_of[slot]]
                    generated.append(token)
                    if token in self.stop_ids or len(generated) == max_new_tokens:
                        finished.append(slot)
                live = self._release(finished, live, cache, sampler, state)
                bar.update(len(finished))
        bar.close()
        return outputs

    def _prefill(self, cache: SlotCache, prompts: list[list[int]], first: int) -> torch.Tensor:
        """Logits of each prompt's next token; its keys go to positions 0.. of slots ``first``.."""
        width = max(map(len, prompts))
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        for row, ids in enumerate(prompts):  # right padding: a pad follows every real token (causal)
            input_ids[row, :len(ids)] = torch.tensor(ids)
        positions = torch.arange(width, device=self.device).expand(len(prompts), width)
        cache.prepare_prefill(torch.arange(first, first + len(prompts), device=self.device), width)
        # prepared 4-D masks, which every decoder's mask builder passes through as they are (Llama's
        # takes no per-layer-type dict); the prefill's keys are its own rows' only
        causal = torch.ones(width, width, dtype=torch.bool, device=self.device).tril()[None, None]
        hidden = self.model.base_model(input_ids=to_device(input_ids, self.device),
                                       position_ids=positions, attention_mask=causal, past_key_values=cache,
                                       use_cache=True).last_hidden_state
        last = device_index([len(ids) - 1 for ids in prompts], self.device)
        return self.model.get_output_embeddings()(hidden[torch.arange(len(prompts), device=self.device), last])

    def _decode(self, cache: SlotCache, tokens: torch.Tensor, positions: torch.Tensor, filled: int) -> torch.Tensor:
        """Logits after one more token of each live row, at its own position (``filled``: 1 + the largest)."""
        cache.prepare_decode(positions, filled)
        visible = torch.arange(filled, device=self.device) <= positions[:, None]
        hidden = self.model.base_model(input_ids=tokens[:, None], position_ids=positions[:, None],
                                       attention_mask=visible[:, None, None, :],
                                       past_key_values=cache, use_cache=True).last_hidden_state
        return self.model.get_output_embeddings()(hidden[:, 0])

    @staticmethod
    def _release(finished: list[int], live: int, cache: SlotCache, sampler, state: SlotRows) -> int:
        """Free the ``finished`` slots; the last live rows move into those below the new live count."""
        if not finished:
            return live
        remaining = live - len(finished)
        gone = set(finished)
        holes = sorted(slot for slot in gone if slot < remaining)
        movers = [slot for slot in range(remaining, live) if slot not in gone]
        if holes:
            source, target = device_index(movers, cache.keys.device), device_index(holes, cache.keys.device)
            cache.move(source, target, int(state.lengths[movers].max()))
            sampler.move(movers, holes)
            state.move(movers, holes, source, target)
        return remaining
