"""Where CPU vendors part: the bits of each op the toy uses, under each MKL branch, on this CPU.

    python benchmarks/numerics/numerics.py           # writes benchmarks/numerics/results/numerics_<vendor>.json
    python benchmarks/numerics/numerics.py --compare benchmarks/numerics/results/numerics_amd.json benchmarks/numerics/results/numerics_intel.json

Each setting runs in its own subprocess (MKL reads ``MKL_CBWR`` when it loads) with the rest of
the workflow's pin (``fpa.numerics``: ATen's avx2 kernels, oneDNN capped at AVX2) and 2 threads,
as the toy's jobs run. It hashes (sha256 of the result's bytes) each op on fixed random inputs: the
matmuls of the toy model's layers at an SFT batch's shape, softmax over attention scores,
log-softmax over the vocabulary, RMSNorm, SiLU, one AdamW step, and one SFT step of the toy model
(``fpa.toy.model.train``, its weights after the step); and it times the matmuls (median of
process CPU seconds, idle OpenMP threads asleep, so other jobs on the machine do not count).
The record names the CPU (``fpa.provenance.cpu``). ``--compare`` says, per setting and op,
whether two records (two CPUs) have the same bits: a setting whose every op matches gives one
world on both CPUs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"
#: MKL_CBWR values: None = unset (MKL picks by CPU), the workflow's pin, MKL's ISA branches, the vendor-neutral one
SETTINGS = (None, "AVX2,STRICT", "AVX2", "AVX", "SSE4_2", "COMPATIBLE")
TOKENS = 32 * 96  # an SFT batch of the toy: 32 traces of ~96 tokens
THREADS = 2  # the toy jobs' threads (config resources)
TIMED_MATMULS = 20  # per timed round: each layer shape this many times


def setting_name(mkl_cbwr: str | None) -> str:
    return mkl_cbwr or "unset"


def _digest(*tensors) -> str:
    return hashlib.sha256(b"".join(t.detach().contiguous().numpy().tobytes() for t in tensors)).hexdigest()[:16]


def toy_inputs():
    """Fixed random inputs at the toy model's shapes, and its layers' weight shapes (out, in)."""
    import torch

    from fpa.toy.model import model_config
    from fpa.toy.settings import ToyModelConfig
    from fpa.toy.tokenizer import build_tokenizer

    cfg = ToyModelConfig()
    vocab = model_config(cfg, build_tokenizer()).vocab_size
    shapes = {"attention": (cfg.d_model, cfg.d_model), "mlp_up": (cfg.d_ff, cfg.d_model),
              "mlp_down": (cfg.d_model, cfg.d_ff), "lm_head": (vocab, cfg.d_model)}
    generator = torch.Generator().manual_seed(0)
    weights = {name: torch.randn(shape, generator=generator) / shape[1] ** 0.5 for name, shape in shapes.items()}
    inputs = {name: torch.randn(TOKENS, shape[1], generator=generator) for name, shape in shapes.items()}
    scores = torch.randn(32, cfg.n_heads, 96, 96, generator=generator)
    logits = torch.randn(TOKENS, vocab, generator=generator) * 4
    return cfg, weights, inputs, scores, logits


def op_hashes(cfg, weights, inputs, scores, logits) -> dict[str, str]:
    """The digest of each op on the toy's inputs (each op on inputs of its own, so a digest is that op's)."""
    import torch
    from transformers.models.qwen2.modeling_qwen2 import Qwen2RMSNorm

    hashes = {f"matmul {name} {tuple(inputs[name].shape)}x{tuple(w.T.shape)}": _digest(inputs[name] @ w.T)
              for name, w in weights.items()}
    hashes["softmax (attention scores)"] = _digest(torch.softmax(scores, dim=-1))
    hashes["log-softmax (vocabulary)"] = _digest(torch.log_softmax(logits, dim=-1))
    hashes["RMSNorm"] = _digest(Qwen2RMSNorm(cfg.d_model, eps=1e-6)(inputs["attention"]))
    hashes["SiLU"] = _digest(torch.nn.functional.silu(inputs["mlp_down"]))
    parameter = torch.nn.Parameter(weights["mlp_up"].clone())
    parameter.grad = inputs["mlp_up"][: cfg.d_ff].clone()
    torch.optim.AdamW([parameter], lr=cfg.lr, betas=(0.9, 0.95), weight_decay=cfg.weight_decay).step()
    hashes["AdamW step"] = _digest(parameter)
    hashes["SFT step of the toy model"] = sft_step_hash(cfg)
    return hashes


def sft_step_hash(cfg) -> str:
    """The toy model's weights after one step of its SFT (``fpa.toy.model.train``), from its seed."""
    import torch
    from transformers import Qwen2ForCausalLM

    from fpa.toy.model import model_config, sft_problems, train
    from fpa.toy.settings import with_overrides
    from fpa.toy.tokenizer import build_tokenizer

    one_step = with_overrides(cfg, steps=1, warmup_steps=1, log_every=1, n_train_problems=cfg.batch_size * 7)
    torch.manual_seed(one_step.seed)
    tokenizer = build_tokenizer()
    model = Qwen2ForCausalLM(model_config(one_step, tokenizer))
    train(model, sft_problems(one_step), one_step, tokenizer)
    return _digest(*(tensor for _, tensor in sorted(model.state_dict().items())))


def matmul_seconds(weights, inputs, rounds: int) -> dict:
    """Median process CPU and wall seconds of ``TIMED_MATMULS`` matmuls of every layer shape."""
    wall, cpu = [], []
    for _ in range(rounds + 1):  # the first round warms MKL up and is not counted
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(TIMED_MATMULS):
            for name, w in weights.items():
                inputs[name] @ w.T
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
    return {"cpu_s": round(statistics.median(cpu[1:]), 4), "wall_s": round(statistics.median(wall[1:]), 4)}


def worker(rounds: int) -> dict:
    import torch

    from fpa.provenance.cpu import cpu_facts

    torch.set_num_threads(THREADS)
    cfg, weights, inputs, scores, logits = toy_inputs()
    return {"hashes": op_hashes(cfg, weights, inputs, scores, logits), "matmul": matmul_seconds(weights, inputs, rounds),
            "libraries": cpu_facts()["libraries"]}


def setting_env(mkl_cbwr: str | None) -> dict[str, str]:
    """This process's environment with the workflow's pin, MKL's branch ``mkl_cbwr`` (None: unset)."""
    from fpa.numerics import PORTABLE_ENV, portable_env

    env = {key: value for key, value in os.environ.items() if key not in (*PORTABLE_ENV, "MKL_ENABLE_INSTRUCTIONS")}
    env.update({key: value for key, value in portable_env(mkl_cbwr or "").items() if value})
    env["OMP_WAIT_POLICY"] = "PASSIVE"  # idle OpenMP threads sleep: CPU seconds are work done
    return env


def measure(rounds: int) -> dict:
    from fpa.provenance.cpu import cpu_facts

    settings = {}
    for mkl_cbwr in SETTINGS:
        done = subprocess.run([sys.executable, __file__, "--worker", "--rounds", str(rounds)], env=setting_env(mkl_cbwr),
                              capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"MKL_CBWR={setting_name(mkl_cbwr)}: worker failed:\n{done.stderr[-3000:]}")
        settings[setting_name(mkl_cbwr)] = json.loads(done.stdout.strip().splitlines()[-1])
    facts = cpu_facts()  # hardware only: the workers loaded torch, and each says which libraries
    return {"benchmark": "numerics", "cpu": {key: facts[key] for key in ("vendor", "model", "flags")},
            "threads": THREADS, "timed_matmuls": TIMED_MATMULS, "rounds": rounds, "settings": settings}


def _in_order(settings: dict) -> list[str]:
    """The settings' names in ``SETTINGS``' order (a record's JSON has its keys sorted), others last."""
    order = [setting_name(s) for s in SETTINGS]
    return sorted(settings, key=lambda name: order.index(name) if name in order else len(order))


def same_bits(settings: dict, reference: str) -> list[str]:
    """The settings whose every op has the bits of ``reference``'s."""
    return [name for name, run in settings.items() if run["hashes"] == settings[reference]["hashes"]]


def compare(first: dict, second: dict) -> list[str]:
    """Per setting of both records, the ops whose bits differ between their CPUs (lines of text)."""
    names = (f"{record['cpu']['vendor']} {record['cpu']['model']}" for record in (first, second))
    lines = [" vs ".join(names)]
    for setting in [name for name in _in_order(first["settings"]) if name in second["settings"]]:
        ours, theirs = first["settings"][setting]["hashes"], second["settings"][setting]["hashes"]
        differ = [op for op in ours if ours[op] != theirs.get(op)]
        verdict = "one world (every op the same bits)" if not differ else f"{len(differ)} ops differ: {', '.join(differ)}"
        lines.append(f"MKL_CBWR={setting}: {verdict}")
    return lines


def markdown(record: dict) -> str:
    cpu, settings = record["cpu"], record["settings"]
    names = _in_order(settings)
    base = settings["AVX2,STRICT"]["matmul"]["cpu_s"]
    lines = [f"**{cpu['model']}** ({cpu['vendor']}; {', '.join(cpu['flags'])}), torch "
             f"{settings[names[0]]['libraries']['torch']}, MKL {settings[names[0]]['libraries']['mkl']}, "
             f"{record['threads']} threads (`python benchmarks/numerics/numerics.py`): first 8 hex digits of each op's "
             "sha256 under each `MKL_CBWR` (the rest of the pin as the workflow sets it)", "",
             "| op | " + " | ".join(f"`{name}`" for name in names) + " |",
             "|---|" + "---|" * len(names)]
    for op in settings[names[0]]["hashes"]:
        lines.append(f"| {op} | " + " | ".join(f"`{settings[name]['hashes'][op][:8]}`" for name in names) + " |")
    lines.append(f"| matmuls, CPU s ({record['timed_matmuls']}× each shape, median of {record['rounds']}) | "
                 + " | ".join(f"{settings[name]['matmul']['cpu_s']:.2f} ({settings[name]['matmul']['cpu_s'] / base:.1f}×)"
                              for name in names) + " |")
    pinned = same_bits(settings, "AVX2,STRICT")
    lines += ["", f"The workflow's pin `AVX2,STRICT` has the bits of: {', '.join(f'`{n}`' for n in pinned)}; "
              f"cost relative to it in parentheses."]
    return "\n".join(lines) + "\n"


def markdown_headline(record: dict) -> str:
    """The index's line: which branches give the workflow's pin's bits on this CPU."""
    return (f"{record['cpu']['model']}: `MKL_CBWR` branches with the pin's bits: "
            + ", ".join(f"`{name}`" for name in same_bits(record["settings"], "AVX2,STRICT")))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds of the matmuls per setting (median)")
    parser.add_argument("--compare", type=Path, nargs=2, metavar="RECORD", help="compare two CPUs' records")
    parser.add_argument("--out", type=Path, help="default: benchmarks/numerics/results/numerics_<vendor>.json")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.rounds)))
        return 0
    if args.compare:
        first, second = (json.loads(path.read_text()) for path in args.compare)
        lines = compare(first, second)
        print("\n".join(lines))
        return 0 if any(line.endswith("one world (every op the same bits)") for line in lines[1:]) else 1
    from fpa.io import write_json
    from fpa.provenance.cpu import vendor_name

    record = measure(args.rounds)
    out = args.out or RESULTS / f"numerics_{vendor_name(record['cpu']['vendor'])}.json"
    write_json(out, record)
    print(markdown(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
