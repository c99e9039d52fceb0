"""The GPU hour, prepared: the paper's overhead table and the real-shape checks in one device call.

    python benchmarks/gpu/run.py --out DIR [--budget-s 450]   # on the lent GPU; writes DIR/gpu.json
    python benchmarks/gpu/run.py --plan-only                   # prints the plan with its estimates
    python benchmarks/gpu/run.py --tiny --out DIR              # the same code on CPU, tiny shapes (CI)

Measurements, in priority order (``measurements()``), each within the time left of ``--budget-s``
(one that would overrun, or that the memory planner says cannot fit this GPU, is skipped with a line;
one that fails is recorded and the next runs):
the paper's overhead table (Qwen3-4B-Base, FPA with the cached reference vs Off-RL) with the memory
planner beside the measured peak; what users run (``gpu.throughput``: paper.yaml's training under FSDP2
on MATH's length mix, tokens/s, MFU, FPA / Off-RL, the paper per GPU beside) and the cost of
``training.deterministic`` with its resume; the loss head's precision at real N, d, V; our DPO / KTO / SFT
step vs TRL's; FSDP2 (world 1, NCCL) exact resume and gradients with checkpointing on vs off; the
reference cache on the device vs the CPU; the HF decoder's tokens/s; Qwen2.5-Math-7B's overhead if
the planner says it fits this GPU. The record (GPU, versions, CPU, commit, every result) is written
atomically to DIR/gpu.json after each measurement; copy it to benchmarks/gpu/results/gpu.json and run
``python benchmarks/shared/report.py`` for the tables in benchmarks/gpu/README.md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")  # TRL's dataset passes: a log of results
sys.path.insert(0, str(HERE.parent))  # benchmarks/: this package, training.trl_step and shared.harness

import torch  # noqa: E402
from transformers.utils import logging as transformers_logging  # noqa: E402

from gpu import dag, kernels, throughput, training, trl_vs_ours  # noqa: E402
from gpu.budget import Measurement, plan_lines, run_all  # noqa: E402
from gpu.models import ROOT, paper_config, shape, write_model_dir  # noqa: E402
from gpu.tables import markdown  # noqa: E402

from fpa.provenance.cpu import cpu_facts  # noqa: E402
from fpa.provenance.record import package_versions, project_version  # noqa: E402

MAIN, LARGE = "qwen3-4b-base", "qwen2.5-math-7b"
OVERHEAD_ROUNDS = 1  # paired rounds of the overhead table on full shapes: each step is 8 micro-batches
USERS_PROBLEMS = 2  # problems (K samples each) per optimizer step of users_step: two micro-batches, accumulated
H200_BYTES = 139 * 2**30  # the nvidia-h200 kind's usable memory (device KINDS.md), for --plan-only


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add("--out", type=Path, help="directory for gpu.json (required unless --plan-only)")
    add("--budget-s", type=float, default=450.0, help="seconds for all measurements (estimates decide skips)")
    add("--tiny", action="store_true", help="CPU, tiny shapes: the CI run of the same code")
    add("--plan-only", action="store_true", help="print the plan and exit (no GPU needed)")
    add("--only", default="", help="comma-separated measurement keys to run (default: all)")
    add("--rounds", type=int, default=3, help="paired rounds / timed repetitions")
    add("--commit", default=None, help="the commit measured (default: git rev-parse HEAD, if .git is there)")
    args = parser.parse_args(argv)
    if not args.plan_only and args.out is None:
        parser.error("--out is required (or --plan-only)")
    return args


def measurements(tiny: bool, device, gpu_bytes: int) -> list[Measurement]:
    """Everything, in priority order, with estimates (full on an H200, tiny on 2 CPU cores)."""
    config = paper_config()
    main, large = shape(MAIN, tiny), shape(LARGE, tiny)
    narrow = main if tiny else main.with_layers(2)  # the real widths and V at a depth that leaves budget
    lam = config["models"][MAIN]["params"]["fpa"]["lam"]
    trl_cases = ["dpo"] if tiny else ["dpo", "kto", "sft"]  # tiny: the loop once (test_trl_step checks all three)
    cache_length = min(512, main.max_length)  # the CPU side runs the full-depth model: a few tokens only

    def work(ctx, name):
        path = Path(ctx["work"]) / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    def scratch(name, measure):  # a measurement in its own directory, removed after it (the disk is 64 GiB)
        def run(ctx):
            try:
                return measure(work(ctx, name), ctx["rounds"])
            finally:
                shutil.rmtree(Path(ctx["work"]) / name, ignore_errors=True)
        return run

    def main_model(ctx):  # the overhead run's model dir, or a fresh one if that run was skipped or failed
        path = Path(ctx["work"]) / "overhead" / "model"
        if (path / "config.json").is_file():
            return path
        return write_model_dir(main, work(ctx, "cache-model") / "model", device)

    rounds = lambda ctx: ctx["rounds"]  # noqa: E731
    items = [
        # ~55 s to write the model and the cache and open the session (the last H200 record: 81 s in all with 8
        # one-micro-batch steps of ~3.3 s), a micro-batch per method to warm up, then 8 micro-batches per method
        # a round: one round (~53 s) on full shapes, a step averaging 8 micro-batches; the H100's call 5 ran out of
        # memory in it after 90.6 s, which the planner's verdict (unfit) now foresees
        Measurement("overhead", f"overhead table: {main.name}, FPA (cached reference) vs Off-RL, the paper's "
                    "8 micro-batches a step, planner beside", 120, 12,
                    lambda ctx: training.overhead(main, MAIN, work(ctx, "overhead"), device,
                                                  rounds(ctx) if tiny else OVERHEAD_ROUNDS),
                    unfit=training.unfit_reason(main, training.overhead_training(main), gpu_bytes)),
        # the H100's call 5 (gpu_calls/call-5.log): 134.5 s for the model, the MATH-length data and its cache, then
        # configured and causal (a warm-up and 3 paired rounds each) and tuned's out-of-memory; tuned, which the
        # planner puts over the card's memory, is now skipped before it starts on either kind
        Measurement("users_step", f"what users run: {main.name}, paper.yaml's training (FSDP2 world 1), MATH's "
                    "length mix padded; tokens/s, MFU, peak, FPA / Off-RL; causal and tuned body beside", 135, 60,
                    scratch("users", lambda path, rounds: throughput.users_step(
                        main, MAIN, path, device, rounds, USERS_PROBLEMS,
                        gpu_bytes, throughput.TINY_VARIANTS if tiny else throughput.VARIANTS))),
        # call 5: 188.0 s in its own process: users_step's data, configured then deterministic (3 rounds each), and
        # the narrow checkpoint-kill-resume
        Measurement("deterministic", f"training.deterministic: Off-RL step cost ({main.name}) and resume "
                    f"bit-identical ({narrow.name})", 190, 45,
                    scratch("deterministic", lambda path, rounds: throughput.deterministic_cost(
                        main, narrow, MAIN, path, device, rounds, USERS_PROBLEMS, gpu_bytes))),
        # call 5: 16.2 s for FPA's and Off-RL's calls at three precisions and the float64 run
        Measurement("head", f"loss head at N={main.completion_tokens:,}, V={main.architecture.vocab_size:,}: "
                    "FPA's call (cached ref_lse) and Off-RL's, fp32 / TF32 / bf16, FPA's vs float64", 17, 3,
                    lambda ctx: kernels.head_precision(main, device, lam, main.training["head_memory_mb"],
                                                       rounds(ctx))),
        Measurement("trl", f"{' / '.join(c.upper() for c in trl_cases)} step, ours vs TRL ({narrow.name})", 70, 10,
                    scratch("trl", lambda path, rounds: trl_vs_ours.compare(narrow, path, device, trl_cases, rounds))),
        Measurement("fsdp_resume", f"FSDP2 world 1: checkpoint, kill, resume, bit-identical ({narrow.name})", 60, 15,
                    scratch("fsdp", lambda path, _: training.fsdp_resume(narrow, path, device, steps=2 if tiny else 4,
                                                                      stop=1 if tiny else 2))),
        Measurement("checkpointing", f"FSDP2 gradients, checkpointing on vs off ({narrow.name})", 20, 5,
                    scratch("grads", lambda path, _: training.checkpointed_gradients(narrow, path, device))),
        Measurement("cache", f"reference cache on the device vs the CPU ({main.name}, 2 x {cache_length} tokens)",
                    50, 4, lambda ctx: scratch("cache", lambda path, _: kernels.cache_devices(
                        main, main_model(ctx), path, device, max_length=cache_length))(ctx)),
        # the H100's call 6 (gpu_calls/call-6.log, stopped at its 220 s): ~20 s to start and build the model, the
        # warm-up 4 s, 64 slots (128 rows) 150 s, their longest slot's two rows setting the tail (55 % of the rows
        # by 45 s); then 178 slots (356 rows, the slots that fit 80 GB of 256 asked) at 4.35 rows/s in their first
        # 15 s against 64 slots' 1.91, 1.22 times as long a step per slot (178 / 64 / (4.35 / 1.91)), so
        # ~150 x 1.22 = 185 s: ~360 s in all, on an H200 (256 slots) no less
        Measurement("generation", f"HF slot decoder tokens/s ({main.name}, bf16, the paper's "
                    f"{config['generation']['max_new_tokens']:,} new tokens at most, uneven lengths)", 360, 4,
                    lambda ctx: kernels.generation(main, device, [2, 4] if tiny else kernels.configured_batch_sizes(),
                                                   prompt=min(256, main.max_length // 4),
                                                   new_tokens=8 if tiny else config["generation"]["max_new_tokens"],
                                                   temperature=config["generation"]["temperature"])),
        Measurement("dag", "the rehearsal's DAG under Snakemake (config/paper-rehearsal.yaml, one model, HF backend): "
                    "each job's device, dtype, wall time and peak memory", 240, 300,
                    scratch("dag", lambda path, _: dag.run_dag(path, data_mirror(), rehearsal_wheels(),
                                                               cuda=device.type == "cuda", tiny=tiny))),
    ]
    real_large = shape(LARGE, tiny=False)  # the real 7B decides, in tiny mode too
    items.append(Measurement("overhead_large", f"overhead table: {large.name}", 150, 12,
                             scratch("overhead-large", lambda path, rounds: training.overhead(
                                 large, LARGE, path, device, rounds)),
                             unfit=training.unfit_reason(real_large, training.overhead_training(real_large),
                                                         gpu_bytes)))
    return items


def data_mirror() -> Path:
    """The data mirror the DAG reads (its tiny/): $FPA_DATA_MIRROR, else shared/data beside the checkout."""
    return Path(os.environ.get("FPA_DATA_MIRROR", ROOT.parent / "shared" / "data"))


def rehearsal_wheels() -> Path:
    """Where the rehearsal's tokenizer wheels are: the carried .whl/ on the device, else the tests' cache."""
    carried = ROOT / ".whl"
    return carried if list(carried.glob("dashscope-*.whl")) else Path.home() / ".cache" / "fpa-rehearsal"


def environment(device, commit: str | None) -> dict:
    """The GPU, the packages, the CPU and the commit (``--commit``, else the checkout's, if .git is there)."""
    versions, project = package_versions(), project_version()
    cuda = torch.device(device).type == "cuda"
    return {"gpu": torch.cuda.get_device_name(0) if cuda else None,
            "gpu_memory_bytes": torch.cuda.get_device_properties(0).total_memory if cuda else None,
            "device": str(device), "cuda": torch.version.cuda, "cpu": cpu_facts()["model"], "cpu_count": os.cpu_count(),
            **{name: versions.get(name) for name in ("torch", "transformers", "accelerate", "trl", "python")},
            "commit": commit or (None if project["commit"] == "unknown" else project["commit"]),
            "dirty": None if commit else project["dirty"]}


def main(argv=None) -> int:
    args = parse_args(argv)
    transformers_logging.disable_progress_bar()  # a log of results, not of weight-loading bars
    cuda = torch.cuda.is_available() and not args.tiny
    device = torch.device("cuda" if cuda else "cpu")
    gpu_bytes = torch.cuda.get_device_properties(0).total_memory if cuda else H200_BYTES
    if args.tiny:
        torch.set_num_threads(min(2, os.cpu_count() or 1))
    items = measurements(args.tiny, device, gpu_bytes)
    if args.only:
        keep = set(args.only.split(","))
        unknown = sorted(keep - {m.key for m in items})
        if unknown:
            raise SystemExit(f"--only: unknown {unknown}; expected some of {[m.key for m in items]}")
        items = [m for m in items if m.key in keep]
    print("\n".join(plan_lines(items, args.tiny, args.budget_s)), flush=True)
    if not cuda:
        print(f"(no GPU here: the plan assumes {gpu_bytes / 2**30:.0f} GiB, an H200's, for the planner's fit)")
    if args.plan_only:
        return 0
    if not cuda and not args.tiny:
        raise SystemExit("no CUDA device: run with --tiny (CPU, tiny shapes) or --plan-only")
    args.out.mkdir(parents=True, exist_ok=True)
    record = {"benchmark": "gpu", "mode": "tiny" if args.tiny else "full", "budget_s": args.budget_s,
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **environment(device, args.commit)}
    print(f"device: {record['gpu'] or 'CPU'}; torch {record['torch']}, transformers {record['transformers']}, "
          f"trl {record['trl']}; commit {record['commit']}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="fpa-gpu-"))
    try:
        record = run_all(items, {"work": work, "rounds": args.rounds}, record, args.out / "gpu.json", args.budget_s,
                         args.tiny)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(markdown(record))
    failed = [key for key, entry in record["measurements"].items() if entry["status"] == "failed"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
