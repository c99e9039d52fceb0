"""The slot decoder's state (``fpa.generation.decode``): the KV cache of its slots, and per slot what
the host knows of the row it decodes without asking the device.

A slot's row sits at positions 0.. of the slot; live rows fill the leading slots ``[0, live)`` in the
order they were admitted (a compaction keeps that order), so a decode step reads the cache as one
strided view, and rows admitted together are neighbours: the step attends span by span
(``SlotRows.spans``), each span of neighbouring rows over its own longest row's keys.
"""

from __future__ import annotations

import torch

from fpa.generation.samplers import device_index

#: one more span costs about as much as attending over this many more keys (rows x positions), per device
#: type: one more SDPA call per layer. A GPU takes a few microseconds to launch it and reads one layer's
#: keys and values of Qwen3-4B at about 1 microsecond per thousand (4 KiB each at ~4.8 TB/s); the CPU
#: dispatches it in ~20 microseconds and attended ~160 ns per row and key on the toy (benchmarks/generation/
#: README.md at 257ee20: 5.6 ms for 256 rows x 140 keys, 2 heads).
SPAN_COST = {"cpu": 128}
SPAN_COST_ELSEWHERE = 4096


#: the share of a GPU's free memory the slot cache may take: the rest holds a step's logits, the counter
#: sampler's chunks and a prefill's activations
CACHE_SHARE = 0.8


def _cache_shape(config, positions: int) -> tuple[int, int, int, int]:
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    return config.num_hidden_layers, positions, config.num_key_value_heads, head_dim


def cache_bytes_per_slot(config, capacity: int, dtype: torch.dtype) -> int:
    """A slot's keys and values of ``capacity`` positions: Qwen3-4B's 2,304 (256 prompt + 2,048 new tokens)
    take 340 MB in bf16."""
    return 2 * torch.Size(_cache_shape(config, capacity)).numel() * dtype.itemsize


def slots_that_fit(config, capacity: int, dtype: torch.dtype, device: torch.device) -> int | None:
    """How many slots of ``capacity`` positions fit in ``CACHE_SHARE`` of the GPU's free memory (what the
    driver has free and PyTorch holds unused); None off CUDA (the host is not probed)."""
    if device.type != "cuda":
        return None
    free, _ = torch.cuda.mem_get_info(device)
    free += torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    return int(CACHE_SHARE * free // cache_bytes_per_slot(config, capacity, dtype))


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
        shape = _cache_shape(config, slots * capacity)
        self.keys = torch.zeros(shape, dtype=dtype, device=device)
        self.values = torch.zeros(shape, dtype=dtype, device=device)
        self.slots, self.capacity = slots, capacity
        self.slot_starts = torch.arange(slots, device=device) * capacity  # flat index of each slot's position 0
        self.key_positions = torch.arange(capacity, device=device)
        self._index: torch.Tensor | None = None  # flat (slot, position) of each key written now
        self._live = self._filled = 0  # 0: a prefill

    def prepare_prefill(self, first: int, rows: int, width: int) -> None:
        starts = self.slot_starts[first:first + rows]
        self._index, self._filled = (starts[:, None] + self.key_positions[:width]).flatten(), 0

    def prepare_decode(self, positions: torch.Tensor, filled: int) -> torch.Tensor:
        """``positions`` [live]: where each live row's key goes; ``filled``: 1 + their maximum (from the host).
        Returns the rows' attention mask [live, 1, 1, filled] (a row sees its keys up to its position)."""
        self._live, self._filled = len(positions), filled
        self._index = self.slot_starts[:self._live] + positions
        return (self.key_positions[:filled] <= positions[:, None])[:, None, None, :]

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
    """Per slot of the live range ``[0, live)``: on the host, its row, the tokens in the cache
    (``lengths``), the tokens drawn (``drawn``, read or not) and whether it still decodes (``alive``: no
    stop read yet); on the device, its next key's position (``positions``), its next input token
    (``pending``) and whether that position advances (``advancing``: 0 once the row's stop is read, so a
    stopped row left in place until the next compaction rewrites one position)."""

    def __init__(self, slots: int, device: torch.device):
        self.slots, self.live = slots, 0
        self.row_of, self.lengths, self.drawn = [0] * slots, [0] * slots, [0] * slots
        self.alive = [False] * slots
        self.cohort, self.admissions = [0] * slots, 0  # the refill that admitted each slot's row
        self.span_ends: list[int] = []
        self.span_cost = SPAN_COST.get(device.type, SPAN_COST_ELSEWHERE)
        self.positions = torch.zeros(slots, dtype=torch.long, device=device)
        self.pending = torch.zeros(slots, dtype=torch.long, device=device)
        self.advancing = torch.zeros(slots, dtype=torch.long, device=device)

    def alive_count(self) -> int:
        return sum(self.alive[:self.live])

    def spans(self) -> list[tuple[int, int, int]]:
        """(first, stop, keys) of each span of live slots; keys: 1 + the largest position a row of the
        span writes now, which the span's rows attend over."""
        spans, first = [], 0
        for stop in self.span_ends:
            stop = min(stop, self.live)  # stopped rows at the end have left
            if stop > first:
                spans.append((first, stop, max(self.lengths[first:stop]) + 1))
            first = stop
        return spans

    def plan_spans(self) -> None:
        """Rows admitted by one refill make a block; neighbouring blocks share a span while attending
        over the longer one's keys costs no more than a span apart (``SPAN_COST``)."""
        blocks: list[list[int]] = []  # [first, stop, longest length]
        for slot in range(self.live):
            if blocks and self.cohort[slot] == self.cohort[slot - 1]:
                blocks[-1][1:] = slot + 1, max(blocks[-1][2], self.lengths[slot])
            else:
                blocks.append([slot, slot + 1, self.lengths[slot]])
        spans = blocks[:1]
        for first, stop, longest in blocks[1:]:
            span_first, _, span_longest = spans[-1]
            merged = (stop - span_first) * (max(longest, span_longest) + 1)
            apart = (first - span_first) * (span_longest + 1) + (stop - first) * (longest + 1) + self.span_cost
            if merged <= apart:
                spans[-1][1:] = stop, max(longest, span_longest)
            else:
                spans.append([first, stop, longest])
        self.span_ends = [stop for _, stop, _ in spans]

    def most_drawn(self) -> int:
        """The most tokens any row still decoding has drawn (0 when none decodes)."""
        return max((n for n, alive in zip(self.drawn[:self.live], self.alive) if alive), default=0)

    def admit(self, rows: list[int], lengths: list[int]) -> slice:
        """``rows`` (prompts of ``lengths`` tokens) into the slots after the live ones; their slots."""
        new = slice(self.live, self.live + len(rows))
        self.row_of[new], self.lengths[new] = rows, lengths
        self.drawn[new], self.alive[new] = [1] * len(rows), [True] * len(rows)  # the prefill draws one token
        self.cohort[new], self.admissions = [self.admissions] * len(rows), self.admissions + 1
        self.positions[new] = device_index(lengths, self.positions.device)
        self.advancing[new] = 1
        self.live = new.stop
        self.plan_spans()
        return new

    def advance(self) -> None:
        """A decode step: every live row's key written, one more token drawn."""
        for slot in range(self.live):
            if self.alive[slot]:
                self.lengths[slot] += 1
                self.drawn[slot] += 1
        self.positions[:self.live] += self.advancing[:self.live]

    def stop(self, slots: list[int]) -> None:
        """Rows whose stop was read: frozen in place; stopped rows at the end leave the live range."""
        for slot in slots:
            self.alive[slot] = False
        if slots:
            self.advancing[device_index(slots, self.advancing.device)] = 0
        while self.live and not self.alive[self.live - 1]:
            self.live -= 1

    def compaction(self) -> tuple[list[int], list[int], int]:
        """(sources, targets, kept): the rows still decoding moved down over the stopped ones, in order."""
        keep = [slot for slot in range(self.live) if self.alive[slot]]
        moves = [(slot, target) for target, slot in enumerate(keep) if slot != target]
        return [s for s, _ in moves], [t for _, t in moves], len(keep)

    def move(self, source: list[int], target: list[int], source_index: torch.Tensor,
             target_index: torch.Tensor) -> None:
        """Slot ``source[i]``'s row to ``target[i]`` (``target[i] < source[i]``, both increasing)."""
        for s, t in zip(source, target):
            self.row_of[t], self.lengths[t], self.drawn[t], self.alive[t], self.cohort[t] = (
                self.row_of[s], self.lengths[s], self.drawn[s], self.alive[s], self.cohort[s])
        for state in (self.positions, self.pending, self.advancing):
            state[target_index] = state[source_index]
