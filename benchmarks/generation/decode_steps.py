"""A decode step of the HF backend's slot decoder, counted: aten ops and host syncs per step, how full
its slots are on a mixed-length workload, and its CPU time; a commit's decoder against this tree's.

    python benchmarks/generation/decode_steps.py                  # d0e18d6's decoder against this tree's
    python benchmarks/generation/decode_steps.py --rounds 1       # smoke run

Each side runs in a worker process on its own ``src/`` (the commit's exported by ``git archive``),
on the same workload: a seeded random Qwen3 (2 layers, d = 64, V = 256, grouped K/V), 800 prompts of
4-47 tokens, T = 1, at most 192 new tokens, four stop ids, so completions are of mixed lengths
(about geometric, a few reaching the cap), 128 slots, 1 thread.

Counted once per side with the counter sampler (what a GPU runs) under ``StepCounter``: every aten
op (``TorchDispatchMode``) and every host sync, i.e. what waits for a device's queue: the dispatched
``_local_scalar_dense`` (``.item()``, ``int()``, ``bool()`` of a tensor), ``nonzero``, ``masked_select``
and ``unique``, and the Python-level ``Tensor.tolist``, ``.numpy`` and ``.cpu`` (``TorchFunctionMode``:
they copy without dispatching an op). On the CPU every tensor is the device's, so the loop must hold
its host facts in Python, not in CPU tensors, for this count to be a GPU's. Ops and syncs are split
into segments at each forward of the model body (a prefill: input width > 1, the prompts have >= 4
tokens), a segment holding its forward and everything the loop does until the next one; ops inside
the body's forward are the model's, the rest the loop's (``lm_head``, masks, sampler, bookkeeping).
A view op (``aten`` ops that alias their input) launches nothing on a GPU and is counted apart.

Occupancy: per decode step, rows whose tokens are kept (not past a stop) over slots; the batch's
fill counts every row computed. Attended positions: rows x keys per decode step, per kept token.
Timed with the CPU's sampler (noise auto: the generator) for ``--rounds`` paired rounds, the order
alternated; every side's completions must equal the first side's (asserted).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: shared
OUT = HERE / "results" / "decode_steps.json"
BEFORE = "d0e18d6"
SLOTS, PROMPTS, MAX_NEW, STOP_IDS = 128, 800, 192, {0, 1, 2, 3}
#: what waits for the device: dispatched ops whose result size or value the host must see
SYNC_OPS = {"_local_scalar_dense", "nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_dim"}
SYNC_METHODS = {"tolist", "numpy", "cpu"}  # copies to the host that dispatch no op


class StepCounter(TorchDispatchMode):
    """Ops and host syncs per forward of ``body`` (and what follows it until the next forward)."""

    def __init__(self, body):
        super().__init__()
        self.segments: list[dict] = [self._segment("setup")]
        self.inside = False
        self._hooks = [body.register_forward_pre_hook(self._enter, with_kwargs=True),
                       body.register_forward_hook(self._leave)]
        self._functions = _SyncMethods(self)

    @staticmethod
    def _segment(kind: str) -> dict:
        # keys: a prefill's input tokens (padding included), a decode step's attended rows x keys
        return {"kind": kind, "ops": 0, "view_ops": 0, "model_ops": 0, "syncs": Counter(), "rows": 0, "keys": 0}

    def _enter(self, module, args, kwargs):
        ids = kwargs["input_ids"]
        segment = self._segment("prefill" if ids.shape[1] > 1 else "decode")
        spans = kwargs.get("slot_spans") or [(0, ids.shape[0], kwargs["attention_mask"].shape[-1])]
        segment["rows"] = ids.shape[0]
        segment["keys"] = ids.numel() if ids.shape[1] > 1 else sum((stop - first) * keys for first, stop, keys in spans)
        self.segments.append(segment)
        self.inside = True

    def _leave(self, module, args, output):
        self.inside = False

    def sync(self, name: str) -> None:
        self.segments[-1]["syncs"][name] += 1

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        segment = self.segments[-1]
        segment["ops"] += 1
        segment["view_ops"] += func.is_view
        segment["model_ops"] += self.inside
        if func.overloadpacket.__name__ in SYNC_OPS:
            self.sync(f"aten.{func.overloadpacket.__name__}")
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        self._functions.__enter__()
        return super().__enter__()

    def __exit__(self, *exc):
        super().__exit__(*exc)
        self._functions.__exit__(*exc)
        for hook in self._hooks:
            hook.remove()

    def summary(self, slots: int, kept_decode_tokens: int) -> dict:
        decode = [s for s in self.segments if s["kind"] == "decode"]
        prefill = [s for s in self.segments if s["kind"] == "prefill"]
        steps = len(decode)

        def per(segments, key):
            return sum(s[key] for s in segments) / max(1, len(segments))

        def syncs(segments):
            total = sum((s["syncs"] for s in segments), Counter())
            return {"per_step": sum(total.values()) / max(1, len(segments)), "by_kind": dict(total)}

        return {
            "decode_steps": steps, "prefills": len(prefill), "prefill_rows": sum(s["rows"] for s in prefill),
            "prefill_tokens": sum(s["keys"] for s in prefill),
            "per_decode_step": {"ops": per(decode, "ops"), "view_ops": per(decode, "view_ops"),
                                "model_ops": per(decode, "model_ops"),
                                "loop_ops": per(decode, "ops") - per(decode, "model_ops")},
            "per_prefill": {"ops": per(prefill, "ops"), "model_ops": per(prefill, "model_ops")},
            "syncs_decode": syncs(decode), "syncs_prefill": syncs(prefill),
            "syncs_total": sum(sum(s["syncs"].values()) for s in self.segments),
            "occupancy": kept_decode_tokens / (steps * slots), "batch_fill": per(decode, "rows") / slots,
            "attended_per_kept_token": sum(s["keys"] for s in decode) / kept_decode_tokens,
        }


class _SyncMethods(TorchFunctionMode):
    def __init__(self, counter: StepCounter):
        super().__init__()
        self.counter = counter

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", None) in SYNC_METHODS:
            self.counter.sync(f"Tensor.{func.__name__}")
        return func(*args, **(kwargs or {}))


def workload():
    """The seeded random model, the prompts and their row seeds (module docstring)."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                         initializer_range=0.2, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config).eval()
    g = torch.Generator().manual_seed(1)
    lengths = torch.randint(4, 48, (PROMPTS,), generator=g).tolist()
    prompts = [torch.randint(len(STOP_IDS) + 4, 256, (n,), generator=g).tolist() for n in lengths]
    return model, prompts, list(range(PROMPTS))


def decoder(model, noise: str, sync_every: int | None):
    """The side's ``SlotDecoder``: before the refill policy, HFBackend's default refill (= slots)."""
    from fpa.generation.decode import SlotDecoder

    options = {"slots": SLOTS, "stop_ids": STOP_IDS, "pad_id": 0, "noise": noise}
    parameters = inspect.signature(SlotDecoder).parameters
    if "refill" in parameters:
        options["refill"] = SLOTS
    if "sync_every" in parameters:
        options["sync_every"] = sync_every
    return SlotDecoder(model, **options)


def worker(sync_every: int | None, count: bool) -> dict:
    """One side once: counted (counter noise) or timed (noise auto)."""
    torch.set_num_threads(1)
    model, prompts, seeds = workload()
    if not count:
        run = decoder(model, "auto", sync_every)
        clock = time.process_time()
        outputs = run.run(prompts, seeds, temperature=1.0, max_new_tokens=MAX_NEW)
        return {"cpu_s": time.process_time() - clock, "outputs_sha256": _digest(outputs)}
    counter = StepCounter(model.base_model)
    with counter:
        outputs = decoder(model, "counter", sync_every).run(prompts, seeds, temperature=1.0, max_new_tokens=MAX_NEW)
    lengths = [len(row) for row in outputs]
    result = counter.summary(SLOTS, sum(lengths) - len(outputs))  # a row's first token comes from its prefill
    return {**result, "outputs_sha256": _digest(outputs), "lengths": {
        "mean": statistics.mean(lengths), "median": statistics.median(lengths), "max": max(lengths),
        "at_cap": sum(n == MAX_NEW for n in lengths)}}


def _digest(outputs: list[list[int]]) -> str:
    return hashlib.sha256(json.dumps(outputs).encode()).hexdigest()


def _spawn(src: Path, sync_every: int | None, count: bool) -> dict:
    import subprocess

    command = [sys.executable, __file__, "--worker", "--src", str(src)]
    command += ["--sync-every", str(sync_every)] if sync_every else []
    command += ["--count"] if count else []
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_WAIT_POLICY": "PASSIVE", "FPA_PROGRESS_EVERY_S": "3600"}
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"worker on {src} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(before: str, rounds: int) -> dict:
    from shared.checkouts import commit_of, export

    root = HERE.parents[1]
    with tempfile.TemporaryDirectory() as scratch:
        export(root, before, Path(scratch))
        sides = {f"before ({before}: refill = slots, a read every step)": (Path(scratch) / "src", None),
                 "now, a read every step (the CPU's default)": (root / "src", 1),
                 "now, a read every 8 steps (a GPU's default)": (root / "src", 8)}
        counted = {name: _spawn(src, every, count=True) for name, (src, every) in sides.items()}
        timed = []
        for index in range(rounds):
            order = list(sides) if index % 2 == 0 else list(sides)[::-1]
            timed.append({name: _spawn(*sides[name], count=False) for name in order})
            print(f"round {index + 1}: " + ", ".join(f"{n}: {timed[-1][n]['cpu_s']:.2f} CPU s" for n in order))
    digests = {entry[name]["outputs_sha256"] for entry in timed for name in entry}
    if len(digests) != 1:
        raise SystemExit(f"the sides' CPU completions differ: {sorted(digests)}")
    return {"benchmark": "decode_steps", "before": commit_of(root, before), "after": commit_of(root),
            "workload": {"slots": SLOTS, "prompts": PROMPTS, "max_new_tokens": MAX_NEW, "stop_ids": sorted(STOP_IDS),
                         "threads": 1},
            "sides": list(sides), "counted": counted, "rounds": [{n: e[n]["cpu_s"] for n in e} for e in timed],
            "cpu_completions_identical": True, "torch": torch.__version__}


def markdown(record: dict) -> str:
    sides, counted, first = record["sides"], record["counted"], record["sides"][0]
    lengths, w = counted[first]["lengths"], record["workload"]
    lines = [f"{w['prompts']} prompts, {w['slots']} slots, at most {w['max_new_tokens']} new tokens (completions: "
             f"mean {lengths['mean']:.0f}, median {lengths['median']:.0f}, {lengths['at_cap']} at the cap), 1 thread; "
             f"before = `{record['before'][:7]}`, now = `{record['after'][:7]}`; completions identical on every "
             f"side: with the CPU's sampler {'yes' if record['cpu_completions_identical'] else 'no'}, with the "
             f"counter sampler (before: without the noise's cap below 1) "
             f"{'yes' if len({counted[side]['outputs_sha256'] for side in sides}) == 1 else 'no'}.", "",
             "| side | ops / decode step: model + loop (views) | token reads / decode step | other syncs / decode "
             "step | decode steps | prefills | occupancy | batch fill | attended keys / kept token | CPU s / before, "
             "median [min–max] |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for side in sides:
        c = counted[side]
        step, steps = c["per_decode_step"], c["decode_steps"]
        kinds = Counter(c["syncs_decode"]["by_kind"]) + Counter(c["syncs_prefill"]["by_kind"])
        reads = kinds.pop("Tensor.tolist", 0)
        ratios = [entry[side] / entry[first] for entry in record["rounds"]]
        lines.append(f"| {side} | {step['model_ops']:.0f} + {step['loop_ops']:.0f} ({step['view_ops']:.0f}) | "
                     f"{reads / steps:.3f} | {sum(kinds.values()) / steps:.3f}"
                     f"{' (' + ', '.join(f'{k}: {v}' for k, v in sorted(kinds.items())) + ')' if kinds else ''} | "
                     f"{steps} | {c['prefills']} | {c['occupancy']:.3f} | {c['batch_fill']:.3f} | "
                     f"{c['attended_per_kept_token']:.0f} | {statistics.median(ratios):.3f} "
                     f"[{min(ratios):.3f}–{max(ratios):.3f}] |")
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: occupancy and token reads per decode step, before and now (a GPU's read interval)."""
    before, now = (record["counted"][side] for side in (record["sides"][0], record["sides"][-1]))

    def reads(c):
        return (c["syncs_decode"]["by_kind"].get("Tensor.tolist", 0)
                + c["syncs_prefill"]["by_kind"].get("Tensor.tolist", 0)) / c["decode_steps"]

    return (f"slot occupancy on mixed lengths: {before['occupancy']:.2f} before, {now['occupancy']:.2f} now; "
            f"token reads per decode step: {reads(before):.2f}, {reads(now):.2f} (a GPU's read interval)")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the commit whose decoder is the 'before' side")
    parser.add_argument("--rounds", type=int, default=3, help="paired timed rounds")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--src", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--sync-every", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--count", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.sync_every, args.count)))
        return
    if args.rounds < 1:
        raise SystemExit(f"--rounds: expected >= 1, got {args.rounds}")
    from fpa.io import write_json

    record = measure(args.before, args.rounds)
    write_json(args.out, record)
    print(markdown(record))


if __name__ == "__main__":
    main()
