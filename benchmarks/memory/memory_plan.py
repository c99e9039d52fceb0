"""The memory planner's estimate (``fpa.memory``) beside the measured peak of real training steps, CPU.

    python benchmarks/memory/memory_plan.py                 # every case, 3 rounds (~10 min on 2 idle cores)
    python benchmarks/memory/memory_plan.py --rounds 1 --cases toy_fp32

Each case runs ``fpa.training.loop.train`` (the job's own code: model load, data, accelerate,
chunked head, AdamW) for 3 optimizer steps in a fresh subprocess, on a model saved in HF format
and a dataset of sequences exactly ``max_length`` tokens long (the planner's bound). Memory is
the process's RSS high-water mark (VmHWM) less its RSS after the imports (torch's CPU allocator
is plain malloc, and a fixed mmap threshold makes every tensor of 128 KiB or more its own
mapping, returned when freed, so RSS follows the live tensors) less the same for a 32-token run
of the toy model (the runtime's own lazily built state: thread pools, kernels' scratch, the
tokenizer), the CPU counterpart of ``torch.cuda.max_memory_allocated``. The estimate is
``training_memory(...)["peak"]``; the target is |estimate / measured - 1| <= ``TARGET``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))
from fpa.io import write_json  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))  # benchmarks/: shared/ and the other folders
from shared.checkouts import commit_of, cores_text, machine  # noqa: E402
from shared.harness import peak_memory, run_json  # noqa: E402
from shared.rounds import spread, spread_text  # noqa: E402


# model shapes (HF config.json fields): the default run's toy model and the engine benchmark's
MODELS = {
    "toy": {"model_type": "qwen2", "vocab_size": 51, "hidden_size": 128, "intermediate_size": 256,
            "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 64,
            "tie_word_embeddings": True},
    "engine": {"model_type": "qwen2", "vocab_size": 151_936, "hidden_size": 256, "intermediate_size": 4096,
               "num_hidden_layers": 8, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 64,
               "tie_word_embeddings": True},
}
# name: (model, training settings); sequences per micro-batch = micro_batch_problems x samples per problem
CASES = {
    "runtime": ("toy", {"micro_batch_problems": 1, "max_length": 32, "precision": "fp32"}),
    "toy_fp32": ("toy", {"micro_batch_problems": 8, "max_length": 256, "precision": "fp32"}),
    "toy_bf16": ("toy", {"micro_batch_problems": 8, "max_length": 256, "precision": "bf16"}),
    "toy_bf16_ckpt": ("toy", {"micro_batch_problems": 8, "max_length": 256, "precision": "bf16",
                              "gradient_checkpointing": True}),
    "engine_bf16": ("engine", {"micro_batch_problems": 1, "max_length": 512, "precision": "bf16",
                               "chunk_size": 256}),
    "engine_bf16_ckpt": ("engine", {"micro_batch_problems": 1, "max_length": 512, "precision": "bf16",
                                    "chunk_size": 256, "gradient_checkpointing": True}),
    "engine_fp32": ("engine", {"micro_batch_problems": 1, "max_length": 512, "precision": "fp32",
                               "chunk_size": 256}),
}
RUNTIME = "runtime"  # subtracted from every case's measurement
SAMPLES_PER_PROBLEM = 8
STEPS = 3
TARGET = 0.15  # |estimate / measured - 1|, every round


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=[c for c in CASES if c != RUNTIME], choices=list(CASES))
    parser.add_argument("--rounds", type=int, default=3, help="measurements per case (median and spread)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "memory_plan.json"))
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def training_settings(case: str) -> dict:
    settings = {"lr": 1e-4, "warmup_steps": 1, "epochs": 1, "eval_every": 10_000, "checkpoint_every": 10_000,
                "snapshot_every": 0, "diagnostics": False, "chunk_size": 1024, **CASES[case][1]}
    settings["batch_problems"] = settings["micro_batch_problems"]  # one micro-batch per step
    return settings


def prepare(workdir: Path, model: str) -> Path:
    """A random model of ``model``'s shape with a character tokenizer, and max-length samples."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    sys.path.insert(0, str(ROOT / "tests" / "training"))
    from conftest import make_tokenizer

    directory = workdir / model
    if not directory.exists():
        torch.manual_seed(0)
        config = AutoConfig.for_model(**MODELS[model])
        AutoModelForCausalLM.from_config(config).save_pretrained(directory)
        make_tokenizer().save_pretrained(directory)
    return directory


def write_samples(path: Path, problems: int, max_length: int) -> None:
    prompt = "q" * 16
    completion = "a" * (max_length - len(prompt) - 1)  # + eos = max_length tokens
    rows = [{"id": f"p{p}-{k}", "problem_id": f"p{p}", "prompt": prompt, "completion": completion,
             "reward": 1.0 if k % 2 else -1.0, "correct": bool(k % 2)}
            for p in range(problems) for k in range(SAMPLES_PER_PROBLEM)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def worker(case: str, workdir: Path) -> dict:
    """One measurement: in this (fresh) process, the job's training steps from its imports on."""
    import torch
    import transformers  # noqa: F401 (imported before the baseline, as the job has)

    from fpa.training.loop import train

    torch.set_num_threads(1)
    model, _ = CASES[case]
    settings = training_settings(case)
    data = workdir / f"{case}.jsonl"
    write_samples(data, settings["micro_batch_problems"] * STEPS, settings["max_length"])
    memory, _ = peak_memory(lambda: train(
        model_dir=str(workdir / model), train_path=str(data), val_path=str(data), reference_dir=None,
        objective_name="offrl", params={}, training=settings, seed=0, work_dir=str(workdir / f"work-{case}"),
        out_dir=None, stop_after=STEPS))
    return {"measured_mb": memory["extra_mb"]}


def estimate(case: str) -> dict:
    from fpa.memory.architecture import Architecture
    from fpa.memory.training import TrainingJob, training_memory

    model, _ = CASES[case]
    settings = training_settings(case)
    job = TrainingJob(sequences=settings["micro_batch_problems"] * SAMPLES_PER_PROBLEM,
                      max_length=settings["max_length"], precision=settings["precision"],
                      gradient_checkpointing=settings.get("gradient_checkpointing", False),
                      chunk_size=settings["chunk_size"], head_buffers=1)
    parts = training_memory(Architecture.from_hf(MODELS[model], model), job)
    return {key: value / 2**20 for key, value in parts.items()}


def markdown(results: dict) -> str:
    """The Markdown table of a results file: estimate against measured peak, per case."""
    lines = [f"{results['rounds']} rounds per case, {results['steps']} optimizer steps each; commit "
             f"`{results['commit'][:7]}` on {cores_text(results)}; MiB",
             "", "| case | model | precision | checkpointing | measured (median) | estimate | ratio per round |",
             "|---|---|---|---|---:|---:|---|"]
    for case, row in results["cases"].items():
        settings = row["settings"]
        lines.append(f"| {case} | {row['model']} | {settings['precision']} | "
                     f"{'yes' if settings.get('gradient_checkpointing') else 'no'} | "
                     f"{statistics.median(row['tensors_mb']):.1f} | {row['estimate_mb']:.1f} | "
                     + " ".join(f"{ratio:.3f}" for ratio in row["ratio_per_round"]) + " |")
    ratios = {case: row["ratio_per_round"] for case, row in results["cases"].items()}
    outside = [case for case, r in ratios.items() if any(abs(x - 1) > TARGET for x in r)]
    below = [case for case, r in ratios.items() if min(r) < 1]
    largest = max(ratios, key=lambda case: max(ratios[case]))
    lines += ["", f"Within {TARGET:.0%} of the measured peak in every round: "
              f"{'every case' if not outside else 'every case but ' + ', '.join(outside)}. The estimate below the "
              f"measured peak in a round: {', '.join(below) or 'no case'}. The largest ratio: {largest}."]
    return "\n".join(lines)


def markdown_headline(results: dict) -> str:
    """The index's line: the planner's estimate over the measured peak, its range over the cases."""
    ratios = [ratio for row in results["cases"].values() for ratio in row["ratio_per_round"]]
    return (f"fpa plan-memory's estimate / measured training peak: {min(ratios):.2f}–{max(ratios):.2f} over "
            f"{len(results['cases'])} cases")


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, Path(args.workdir))))
        return
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{os.environ.get('PYTHONPATH', '')}",
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
           "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_TRIM_THRESHOLD_": "131072"}
    measured = {case: [] for case in [RUNTIME, *args.cases]}
    with tempfile.TemporaryDirectory() as tmp:
        for model in {CASES[case][0] for case in measured}:
            prepare(Path(tmp), model)
        for _ in range(args.rounds):  # rounds of every case, so that the runtime is paired with each
            for case in measured:
                measured[case].append(run_json([sys.executable, __file__, "--worker", case, "--workdir", tmp], env,
                                               f"case {case}")["measured_mb"])
    results = {}
    for case in args.cases:
        tensors = [m - r for m, r in zip(measured[case], measured[RUNTIME])]
        est = estimate(case)
        ratios = [est["peak"] / t for t in tensors]
        results[case] = {"model": CASES[case][0], "settings": training_settings(case), "measured_mb": measured[case],
                         "runtime_mb": measured[RUNTIME], "tensors_mb": tensors, "estimate_mb": est["peak"],
                         "components_mb": est, "ratio_per_round": ratios, "ratio_median": statistics.median(ratios)}
        print(f"{case:18s} measured {statistics.median(tensors):8.1f} MB  estimate {est['peak']:8.1f} MB  "
              f"ratio {spread_text(spread(ratios))}", flush=True)
    write_json(args.out, {"cases": results, "steps": STEPS, "rounds": args.rounds, "models": MODELS,
                          "commit": commit_of(ROOT), "cpu": machine()})


if __name__ == "__main__":
    main()
