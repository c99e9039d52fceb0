"""The HF backend's decoding loop: a preallocated KV cache and continuous batching.

``model.generate`` decodes a fixed batch until its longest row stops, grows its cache by
``torch.cat`` every step and attends over the whole padded batch. This loop allocates a
cache of ``slots`` rows once (``fpa.generation.slot_cache``) and

  * attends over the filled length only (the longest row of each span of neighbouring rows,
    ``SlotRows.spans``, not the cache's capacity: a static cache attending over its full length was
    slower), so rows admitted later do not read the older rows' length of masked keys;
  * reads the steps' token ids back once every ``sync_every`` steps, not every step: the host
    issues that many steps without waiting for the device (``SYNC_EVERY``);
  * refills slots as rows stop, batched: once the slot-steps left to empty or stopped slots since
    the last refill add up to one full step (``slots``), or as soon as every waiting prompt fits.
    That bounds both costs: prefills (each holds every live row back one step) come at most once per
    ``slots`` idle slot-steps, and the slots left idle between them cost at most as much (the
    ski-rental balance). A refill first compacts: the rows still decoding move down over the stopped
    ones, in the order they were admitted, so the live rows stay in the leading slots, a step reads
    the cache as one strided view, and rows admitted together stay neighbours (one span).

The model's own modules compute each forward (``model.model`` with this cache as its
``past_key_values`` and prepared 4-D masks, then ``lm_head`` on each row's last token), so any
decoder whose layers call ``past_key_values.update`` works: the toy model is a Qwen2, the
rehearsal's (config/paper-rehearsal.yaml) Qwen3, Qwen2 and Llama. A
prompt sits at positions 0.. of its slot, so a row's positions, keys and logits are those
of its prompt decoded alone, up to the last bits of batched kernels; its token is drawn
with its own noise (``fpa.generation.samplers``), so what a row gets does not depend on its
slot, its neighbours, when it was admitted or how often the host reads. Attention keeps grouped
K/V grouped (``fpa.generation.slot_attention``).

What a step needs the host knows without asking the device: every row's length and tokens drawn
(``SlotRows``), so the attended length comes from there, and indices go to the device without a
wait (``samplers.to_device``). The device is waited on once per read, for the token ids drawn since
the last one (8 bytes a row and step): the host needs them to stop rows and refill their slots. A
row decodes on, unread, up to ``sync_every - 1`` tokens past its stop (discarded; its own noise, so
no other row's tokens change), and a refill comes up to ``sync_every - 1`` steps late; no row ever
draws past ``max_new_tokens`` (a read comes first). On the CPU there is no queue to run ahead of,
so the loop reads every step. (CUDA graphs would take the launches off the host; not done here.)
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Sequence

import torch

from fpa.generation.samplers import check_noise, device_index, make_sampler, to_device
from fpa.generation.slot_attention import grouped_slot_attention
from fpa.generation.slot_cache import SlotCache, SlotRows, slots_that_fit
from fpa.progress import progress

log = logging.getLogger(__name__)

#: steps between reads of the drawn token ids, per device type: the CPU runs each op as it is issued
#: (nothing to overlap; a token past a stop is pure waste); a GPU's host queues this many steps while the
#: device runs, for a row decoding up to 7 tokens past its stop (3.5 on average; a GPU's completions
#: run to hundreds of tokens). Not yet timed on a GPU (benchmarks/gpu/run.py's generation measures it).
SYNC_EVERY = {"cpu": 1}
SYNC_EVERY_ELSEWHERE = 8


class SlotDecoder:
    """Sampled completions of many rows with ``slots`` rows decoding at a time.

    ``model``: an HF causal LM (eval mode); ``stop_ids``: a row stops at any of them, kept as its
    last token (so that the caller knows why it ended: a row without one reached max_new_tokens);
    ``noise``: the sampler's (``samplers.NOISES``); ``sync_every``: steps between reads of the drawn
    token ids (default ``SYNC_EVERY`` for the model's device). On a GPU a run takes fewer slots than
    ``slots`` where their cache would not fit its free memory (``slot_cache.slots_that_fit``): the tokens
    do not depend on the slot count.
    """

    def __init__(self, model, *, slots: int, stop_ids: set[int], pad_id: int, noise: str = "auto",
                 sync_every: int | None = None):
        self.device = next(model.parameters()).device
        sync_every = SYNC_EVERY.get(self.device.type, SYNC_EVERY_ELSEWHERE) if sync_every is None else sync_every
        if slots < 1 or sync_every < 1:
            raise ValueError(f"slots, sync_every: expected both >= 1, got {slots}, {sync_every}")
        layer_types = set(getattr(model.config, "layer_types", None) or ["full_attention"])
        if layer_types != {"full_attention"}:
            raise NotImplementedError(f"layer types {sorted(layer_types)}: the slot cache attends over every "
                                      f"position (no sliding window); use the vllm backend for this model")
        check_noise(noise)
        self.model, self.slots, self.noise, self.sync_every = model, slots, noise, sync_every
        self.stop_ids, self.pad_id = stop_ids, pad_id

    @torch.no_grad()
    def run(self, prompts: Sequence[list[int]], seeds: Sequence[int | None], *, temperature: float,
            max_new_tokens: int) -> list[list[int]]:
        """The generated ids of each prompt (``seeds[i]``: its row's seed, None when greedy), up
        to and with the stop id that ended it, or ``max_new_tokens`` ids without one."""
        if not prompts:
            return []
        capacity = max(map(len, prompts)) + max_new_tokens
        slots = self._slot_count(len(prompts), capacity)
        cache = SlotCache(self.model.config, slots, capacity, self.model.dtype, self.device)
        sampler = make_sampler(self.noise, slots, self.model.config.vocab_size, temperature, self.device)
        waiting = deque(sorted(range(len(prompts)), key=lambda r: len(prompts[r])))
        rows = SlotRows(slots, self.device)
        outputs: list[list[int]] = [[] for _ in prompts]
        unread: list[tuple[slice, torch.Tensor]] = []  # the slots and token ids of each step since the last read
        idle = 0  # slot-steps left to empty or stopped slots since the last refill
        bar = progress(len(prompts), "generate", unit="completion")
        with grouped_slot_attention(self.model) as spans_apart:
            while waiting or rows.live:
                refill = not unread and self._refill_due(rows, len(waiting), idle)
                if refill:
                    self._compact(rows, cache, sampler)
                    idle = 0
                if refill and waiting:
                    admitted = [waiting.popleft() for _ in range(min(slots - rows.live, len(waiting)))]
                    new = rows.admit(admitted, [len(prompts[row]) for row in admitted])
                    sampler.admit(new.start, [seeds[row] for row in admitted])
                    logits = self._prefill(cache, [prompts[row] for row in admitted], new.start)
                else:
                    new = slice(0, rows.live)
                    spans = rows.spans()
                    logits = self._decode(cache, rows.pending[new], rows.positions[new], spans, spans_apart)
                    rows.advance()
                    idle += slots - rows.alive_count()
                tokens = sampler.draw(logits, new.start, new.stop)
                rows.pending[new] = tokens
                unread.append((new, tokens))
                if len(unread) == self.sync_every or rows.most_drawn() == max_new_tokens:
                    bar.update(self._read(unread, rows, outputs, max_new_tokens))
                    unread = []
        bar.close()
        return outputs

    def _slot_count(self, rows: int, capacity: int) -> int:
        """``slots`` (at most one a row), fewer where their cache of ``capacity`` positions would not fit a
        GPU's free memory."""
        slots = min(self.slots, rows)
        fit = slots_that_fit(self.model.config, capacity, self.model.dtype, self.device)
        if fit is None or fit >= slots:
            return slots
        if fit < 1:
            raise MemoryError(f"{self.device}: not one slot of {capacity} positions fits the free memory")
        log.warning("generation: %d slots of %d positions fit the GPU's free memory (batch_size %d)", fit,
                    capacity, self.slots)
        return fit

    def _refill_due(self, rows: SlotRows, waiting: int, idle: int) -> bool:
        """Whether to compact and admit now (module docstring): with prompts waiting, once no row decodes,
        the idle slot-steps reach a full step or every waiting prompt fits; else a compaction alone on
        the same idle bound, while stopped rows hold slots."""
        decoding, slots = rows.alive_count(), rows.slots
        if waiting and decoding < slots:
            return decoding == 0 or idle >= slots or slots - decoding >= waiting
        return decoding < rows.live and idle >= slots

    def _read(self, unread: list[tuple[slice, torch.Tensor]], rows: SlotRows, outputs: list[list[int]],
              max_new_tokens: int) -> int:
        """The token ids of the unread steps to their rows' outputs (the wait for the device); rows that
        stopped are frozen. Returns how many stopped."""
        ids = iter((unread[0][1] if len(unread) == 1 else torch.cat([tokens for _, tokens in unread])).tolist())
        stopped = []
        for new, _ in unread:
            for slot, token in zip(range(new.start, new.stop), ids):
                if not rows.alive[slot]:
                    continue  # drawn past its stop, unread until now
                generated = outputs[rows.row_of[slot]]
                generated.append(token)
                if token in self.stop_ids or len(generated) == max_new_tokens:
                    rows.alive[slot] = False
                    stopped.append(slot)
        rows.stop(stopped)
        return len(stopped)

    @staticmethod
    def _compact(rows: SlotRows, cache: SlotCache, sampler) -> None:
        """The rows still decoding move down over the stopped ones, keeping their order."""
        source, target, kept = rows.compaction()
        if source:
            source_index, target_index = device_index(source, cache.keys.device), device_index(target, cache.keys.device)
            cache.move(source_index, target_index, max(rows.lengths[slot] for slot in source))
            sampler.move(source, target)
            rows.move(source, target, source_index, target_index)
        rows.live = kept
        rows.plan_spans()

    def _prefill(self, cache: SlotCache, prompts: list[list[int]], first: int) -> torch.Tensor:
        """Logits of each prompt's next token; its keys go to positions 0.. of slots ``first``.."""
        width = max(map(len, prompts))
        input_ids = torch.full((len(prompts), width), self.pad_id, dtype=torch.long)
        for row, ids in enumerate(prompts):  # right padding: a pad follows every real token (causal)
            input_ids[row, :len(ids)] = torch.tensor(ids)
        positions = cache.key_positions[:width].expand(len(prompts), width)
        cache.prepare_prefill(first, len(prompts), width)
        # prepared 4-D masks, which every decoder's mask builder passes through as they are (Llama's
        # takes no per-layer-type dict); the prefill's keys are its own rows' only
        causal = torch.ones(width, width, dtype=torch.bool, device=self.device).tril()[None, None]
        hidden = self.model.base_model(input_ids=to_device(input_ids, self.device),
                                       position_ids=positions, attention_mask=causal, past_key_values=cache,
                                       use_cache=True).last_hidden_state
        last = device_index([len(ids) - 1 for ids in prompts], self.device)
        return self.model.get_output_embeddings()(hidden[torch.arange(len(prompts), device=self.device), last])

    def _decode(self, cache: SlotCache, tokens: torch.Tensor, positions: torch.Tensor,
                spans: list[tuple[int, int, int]], spans_apart: bool) -> torch.Tensor:
        """Logits after one more token of each live row, at its own position (``spans``: ``SlotRows.spans``;
        attended span by span where the model attends with ``slot_attention``, else all over the longest)."""
        visible = cache.prepare_decode(positions, max(keys for *_, keys in spans))
        apart = {"slot_spans": spans} if spans_apart else {}
        hidden = self.model.base_model(input_ids=tokens[:, None], position_ids=positions[:, None],
                                       attention_mask=visible, past_key_values=cache, use_cache=True,
                                       **apart).last_hidden_state
        return self.model.get_output_embeddings()(hidden[:, 0])
