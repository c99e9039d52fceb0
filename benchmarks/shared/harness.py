"""What the step benchmarks share: the model, the clocks, the memory probe, subprocess workers, random text.

``training/trl_step.py`` times training steps of a small tied-head Qwen2 (a body larger than its
head, V = 151,936), each measurement in a fresh subprocess:

- Memory: after setup the kernel's RSS high-water mark is reset (``echo 5 >
  /proc/self/clear_refs``) and VmHWM is read after the measured op. torch's CPU
  allocator is plain malloc, so RSS is the real footprint (tracemalloc does not see it).
- Time: medians over interleaved rounds (rotated start) of wall time and of process
  CPU time (user + sys of all threads); workers run with OMP_WAIT_POLICY=PASSIVE so
  idle OpenMP threads sleep instead of spinning, and CPU time measures work done.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from shared.rounds import rotated


def add_model_args(parser) -> None:
    """The model, thread and step flags of a step benchmark; the defaults are small enough for >= 5 paired
    rounds of trl_step's whole sweep on 2 shared cores, the head keeping Qwen's V."""
    add = parser.add_argument
    add("--vocab", type=int, default=151_936, help="vocabulary size V")
    add("--hidden", type=int, default=64, help="model width d")
    add("--layers", type=int, default=2, help="transformer layers")
    add("--ffn", type=int, default=256, help="MLP width")
    add("--threads", type=int, default=2, help="torch.set_num_threads")
    add("--seq", type=int, default=1024, help="tokens per sequence (prompt + completion + eos)")
    add("--prompt", type=int, default=32, help="prompt tokens per sequence")
    add("--chunk-size", type=int, default=128, help="rows per chunk of our loss head")
    add("--reps", type=int, default=5, help="timed rounds (median)")


def build_model(args, seed=0):
    """A tied-head Qwen2 of ``args``' sizes, fp32, random weights from ``seed``."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                         num_attention_heads=args.hidden // 64, num_key_value_heads=max(1, args.hidden // 192),
                         head_dim=64, intermediate_size=args.ffn, tie_word_embeddings=True)
    return Qwen2ForCausalLM(config)


def model_sizes(args) -> dict:
    """Parameter counts of body and (tied) head."""
    model = build_model(args)
    head = model.lm_head.weight.numel()
    return {"body_params": sum(p.numel() for p in model.parameters()) - head, "head_params": head}


def _status_kb(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def peak_memory(run) -> tuple[dict, object]:
    """Run ``run()`` once with the RSS high-water mark reset just before; returns (memory in MB, its result)."""
    baseline = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    result = run()
    peak = _status_kb("VmHWM")
    return {"peak_mb": peak / 1024, "extra_mb": (peak - baseline) / 1024, "baseline_mb": baseline / 1024}, result


def timed(fn):
    """(wall s, process CPU s): CPU time = user + sys of all threads, blind to other jobs' load."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def interleaved(jobs: dict, reps: int, check=lambda warm: None) -> dict:
    """Warm every job up once, then ``reps`` rounds in rotated order; medians of wall and CPU seconds.
    ``check`` gets {name: return value of its warm-up call} before anything is timed."""
    warm = {name: job() for name, job in jobs.items()}
    check(warm)
    times = {name: [] for name in jobs}
    for round_ in range(reps):
        for name in rotated(list(jobs), round_):
            times[name].append(timed(jobs[name]))
    return {name: {"wall_s": statistics.median(w for w, _ in t), "cpu_s": statistics.median(c for _, c in t),
                   "all_wall_cpu_s": t} for name, t in times.items()}


def spawn(script, args, worker, workdir, skip=("worker", "workdir")):
    """Run ``script --worker W --workdir D`` with ``args`` as flags; returns the JSON its last stdout line holds."""
    cmd = [sys.executable, str(script), "--worker", worker, "--workdir", str(workdir)]
    for key, value in vars(args).items():
        if key not in skip and value is not None:
            cmd += [f"--{key.replace('_', '-')}", ",".join(map(str, value)) if isinstance(value, list) else str(value)]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}  # idle OpenMP threads sleep: CPU time = work done
    return run_json(cmd, env, f"worker {worker}")


def run_json(argv: list[str], env: dict, what: str):
    """Run ``argv`` in a fresh process; the JSON its last stdout line holds (``what`` names it if it fails)."""
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode:
        raise RuntimeError(f"{what} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ascii_text(rng, n: int) -> str:
    """n printable ASCII characters: n tokens of the byte-level toy tokenizer (no merges)."""
    return "".join(chr(rng.randrange(33, 127)) for _ in range(n))
