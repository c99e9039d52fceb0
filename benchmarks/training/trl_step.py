"""One optimizer step of our trainer against TRL 1.16.0's trainers, CPU, paired per round.

    nice python benchmarks/training/trl_step.py                                # the sweep; writes results/trl_step.json
    python benchmarks/training/trl_step.py --seqs 64 --chunks 64 --reps 1 --vocab 8192   # smoke run

Model: ``harness.build_model`` (tied-head Qwen2, fp32) at ``--hidden/--layers/--ffn``, V = 151,936
by default so that the loss head's chunk matters as it does for Qwen. The batch is one
preference pair: one prompt of ``--prompt`` tokens, a chosen and a rejected completion
filling ``seq`` tokens each (no padding on either side), for every ``seq`` of ``--seqs``.
The reference is another random model of the same shape (seed 1; the policy is seed 0),
so that log π_θ − log π_ref is not 0 and equal losses mean something.

Cases (ours ↔ TRL): dpo ↔ DPOTrainer (sigmoid, β = 0.1); kto ↔ KTOTrainer (β = 0.05,
λ_w = λ_l = 1); sft ↔ SFTTrainer on the chosen completion (ours keeps correct samples only).

Ours is the trainer's own step: ``fpa.training.session.open_session`` on files written
here (model dirs, train.jsonl, a reference cache from ``fpa.reference.cache``, fp32) and
``_optimizer_step`` (collate, cached reference, chunked head, objective, backward, clip,
AdamW, schedule), once per chunk size of ``--chunks``. TRL's is
``trainer.training_step(model, batch)`` on the batch of its own dataloader and collator,
then clip, optimizer and scheduler step and zero_grad as ``Trainer``'s loop does;
reference log-probs precomputed by TRL (``precompute_ref_log_probs=True``) from the
reference weights, which are then replaced in place by the policy's. On CPU TRL's fused
log-prob head runs its torch tile fallback (its Triton kernel needs CUDA/XPU).

Before anything is timed, each worker asserts that both sides see the same token ids
and compute the same first-step loss. Memory: peak RSS of one step per case, length and
side in a fresh subprocess (``harness.peak_memory``). Time: one subprocess per case and
length holds TRL's step and ours at every chunk size; each round runs all of them back
to back (rotated order), and the ratio ours / TRL is taken per round (process CPU time);
the table gives its median and min–max over the rounds.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.harness import (  # noqa: E402
    add_model_args, ascii_text, build_model, interleaved, model_sizes, peak_memory, spawn)
from shared.checkouts import commit_of, cores_text, machine  # noqa: E402
from shared.rounds import paired_ratio, spread_text  # noqa: E402

from fpa.io import write_json, write_jsonl  # noqa: E402

CASES = {"dpo": "dpo", "kto": "kto", "sft": "sft"}  # our objective -> the TRL trainer computing the same loss
KTO_BETA = 0.05  # our KTO default (the paper's); TRL's default is 0.1
LR = 1e-6
# fp32 sums of ~10^3 token log-probs (|log p| ~ log V) agree to ~1e-3 nats across summation orders; a token
# more or less, or a shifted label, moves the loss by orders of magnitude more than this tolerance.
LOSS_RTOL = 1e-3
# what lowers the shared state, on both sides: (our training config, TRL's TrainingArguments)
OPTIONS = {"gradient_checkpointing": ({"gradient_checkpointing": True}, {"gradient_checkpointing": True}),
           "fused_adamw": ({"adamw": "fused"}, {"optim": "adamw_torch_fused"})}
OUT = Path(__file__).parent / "results" / "trl_step.json"


def _ints(text):
    return [int(x) for x in text.split(",")]


def _options(text):
    chosen = [x for x in text.split(",") if x]
    unknown = sorted(set(chosen) - set(OPTIONS))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown {unknown}; expected some of {list(OPTIONS)}")
    return chosen


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add_model_args(parser)
    add("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    add("--seqs", type=_ints, default=[256, 512, 1024, 2048], help="comma-separated sequence lengths")
    add("--chunks", type=_ints, default=[512, 1024],
        help="our loss-head chunk sizes (the toy configs' 1024; chunk_size: auto at V=151,936 and 1 GiB: "
             "512 for FPA, 1024 for a one-buffer head)")
    add("--options", type=_options, default=[],
        help="comma-separated, applied to both sides alike: " + ", ".join(OPTIONS))
    add("--out", default=str(OUT))
    add("--worker", help=argparse.SUPPRESS)
    add("--workdir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- data and files
def prepare(args, workdir, build=build_model, device="cpu"):
    """Tokenizer, policy and reference model dirs, our train split and reference cache, TRL's rows;
    ``build(args, seed)``: the model (``benchmarks/gpu`` builds another shape on the GPU)."""
    from fpa.reference.cache import write_reference_cache
    from fpa.toy.tokenizer import EOS, build_tokenizer

    tokenizer = build_tokenizer()
    tokenizer.model_max_length = args.seq  # the toy default (256) would only warn
    for name, seed in (("policy", 0), ("reference", 1)):
        build(args, seed).save_pretrained(workdir / name)
        tokenizer.save_pretrained(workdir / name)
    rng = random.Random(0)
    prompt, completion = ascii_text(rng, args.prompt), args.seq - args.prompt - 1  # + eos
    samples = [{"id": f"p0-{label}", "problem_id": "p0", "prompt": prompt, "completion": ascii_text(rng, completion),
                "reward": reward, "correct": reward > 0} for label, reward in (("chosen", 1.0), ("rejected", -1.0))]
    write_jsonl(workdir / "train.jsonl", samples)
    write_reference_cache(workdir / "reference", samples, tokenizer, workdir / "cache", max_length=args.seq,
                          dtype="float32", device=device)  # fp32 z_ref: the same reference log-probs as TRL's fp32 forward
    chosen, rejected = (s["completion"] + EOS for s in samples)  # TRL appends eos unless present
    rows = {"dpo": [{"prompt": prompt, "chosen": chosen, "rejected": rejected}],
            "kto": [{"prompt": prompt, "completion": chosen, "label": True},
                    {"prompt": prompt, "completion": rejected, "label": False}],
            "sft": [{"prompt": prompt, "completion": chosen}]}
    write_json(workdir / "trl_rows.json", rows)
    return {}


# ---------------------------------------------------------------- the two sides
class Ours:
    """Our trainer's session and its optimizer step, for one objective."""

    def __init__(self, args, workdir, objective, chunk_size):
        from fpa.training import loop
        from fpa.training.session import TrainConfig, open_session

        training = {"lr": LR, "batch_problems": 1, "micro_batch_problems": 1, "max_length": args.seq,
                    "chunk_size": chunk_size, **getattr(args, "training", {})}
        for option in args.options:
            training.update(OPTIONS[option][0])
        train = str(workdir / "train.jsonl")
        self.run, _ = open_session(str(workdir / "policy"), train, train, str(workdir / "cache"), objective,
                                   {}, TrainConfig.from_dict(training), seed=0)
        self.loop, self.steps = loop, 0

    def input_ids(self):
        from fpa.training import batches as B

        groups = B.global_batch(self.run.train.groups, 0, batch_problems=1, seed=self.run.seed)
        return B.collate(groups, self.run.train.encoded, self.run.train.samples, 0).input_ids

    def step(self):
        row = self.loop._optimizer_step(self.run, self.steps)
        self.steps += 1
        return row["loss"]


def _trl_trainer(kind, args, workdir):
    import datasets
    import trl
    from safetensors import safe_open
    from transformers import AutoModelForCausalLM, AutoTokenizer

    datasets.disable_caching()  # TRL's precompute would otherwise write into the user's datasets cache
    common = dict(output_dir=str(workdir / f"trl-{kind}"), report_to="none", max_length=args.seq, learning_rate=LR,
                  disable_tqdm=True, dataloader_num_workers=0, seed=0)
    if not getattr(args, "trl_defaults", False):  # on CPU; on a GPU TRL's defaults (bf16, checkpointing) stand
        common.update(use_cpu=True, bf16=False, gradient_checkpointing=False, use_liger_kernel=False)
    for option in args.options:
        common.update(OPTIONS[option][1])
    rows = json.loads((workdir / "trl_rows.json").read_text())[kind]
    config, trainer_type = {
        "dpo": (lambda: trl.DPOConfig(per_device_train_batch_size=1, precompute_ref_log_probs=True, **common),
                trl.DPOTrainer),
        "kto": (lambda: trl.KTOConfig(per_device_train_batch_size=2, precompute_ref_log_probs=True, beta=KTO_BETA,
                                      **common), trl.KTOTrainer),
        "sft": (lambda: trl.SFTConfig(per_device_train_batch_size=1, **common), trl.SFTTrainer),
    }[kind]
    # DPO/KTO: TRL precomputes the reference log-probs from the model it is given (no reference model is kept),
    # so it gets the reference weights, then the policy's are copied in place before any step.
    start = "policy" if kind == "sft" else "reference"
    model = AutoModelForCausalLM.from_pretrained(workdir / start, dtype=torch.float32)
    trainer = trainer_type(model=model, args=config(), train_dataset=datasets.Dataset.from_list(rows),
                           processing_class=AutoTokenizer.from_pretrained(workdir / start))
    with torch.no_grad(), safe_open(str(workdir / "policy" / "model.safetensors"), "pt") as f:
        for name, param in model.named_parameters():
            param.copy_(f.get_tensor(name))
    trainer.create_optimizer_and_scheduler(num_training_steps=1000)
    return trainer


class Trl:
    """A TRL trainer and one optimizer step as ``Trainer``'s training loop runs it."""

    def __init__(self, args, workdir, kind):
        self.trainer = trainer = _trl_trainer(kind, args, workdir)
        # as ``Trainer._inner_training_loop`` fetches an optimizer step's batches (one, here)
        loader = iter(trainer.get_train_dataloader())
        batches, self.num_items = trainer.get_batch_samples(loader, 1, trainer.args.device)
        (self.batch,) = batches
        trainer.current_gradient_accumulation_steps = 1

    def input_ids(self):
        return self.batch["input_ids"]

    def step(self):
        trainer, model = self.trainer, self.trainer.model
        loss = trainer.training_step(model, self.batch, self.num_items)
        trainer._clip_grad_norm(model)
        trainer.optimizer.step()
        trainer.lr_scheduler.step()
        model.zero_grad()
        return loss.item()


def build_side(args, workdir, case, side, chunk_size=None):
    torch.set_num_threads(args.threads)
    return Ours(args, workdir, case, chunk_size) if side == "ours" else Trl(args, workdir, CASES[case])


def check_same_work(case, losses, ids):
    """Same token ids and the same first-step loss on both sides."""
    if not torch.equal(ids["ours"], ids["trl"]):
        raise AssertionError(f"{case}: the two sides' batches differ: ours {tuple(ids['ours'].shape)}, "
                             f"TRL {tuple(ids['trl'].shape)}")
    if not math.isclose(losses["ours"], losses["trl"], rel_tol=LOSS_RTOL, abs_tol=1e-6):
        raise AssertionError(f"{case}: first-step losses differ: ours {losses['ours']!r}, TRL {losses['trl']!r}")


# ---------------------------------------------------------------- workers
def memory_worker(args, workdir, case, side):
    runner = build_side(args, workdir, case, side, args.chunk_size)
    memory, loss = peak_memory(runner.step)
    return {**memory, "first_loss": loss, "input_ids": runner.input_ids().tolist()}


def time_worker(args, workdir, case):
    sides = {"trl": build_side(args, workdir, case, "trl")}
    sides.update({f"ours_{chunk}": build_side(args, workdir, case, "ours", chunk) for chunk in args.chunks})

    def check(warm):
        for name in sides:
            check_same_work(f"{case} {name}", {"ours": warm[name], "trl": warm["trl"]},
                            {"ours": sides[name].input_ids(), "trl": sides["trl"].input_ids()})

    return interleaved({name: runner.step for name, runner in sides.items()}, args.reps, check=check)


# ---------------------------------------------------------------- one point of the sweep
def measure_point(args, workdir, case, skip):
    """Memory (fresh process per side) and paired times of one case at one length; losses checked first."""
    memory = {"trl": spawn(__file__, args, f"trl:{case}", workdir, skip)}
    for chunk in args.chunks:
        args.chunk_size = chunk
        memory[f"ours_{chunk}"] = spawn(__file__, args, f"ours:{case}", workdir, skip)
        check_same_work(case, {"ours": memory[f"ours_{chunk}"]["first_loss"], "trl": memory["trl"]["first_loss"]},
                        {side: torch.tensor(memory[key]["input_ids"]) for side, key in
                         (("ours", f"ours_{chunk}"), ("trl", "trl"))})
    for entry in memory.values():
        entry.pop("input_ids")
    times = spawn(__file__, args, f"time:{case}", workdir, skip)
    trl_rounds = times["trl"]["all_wall_cpu_s"]
    rows = []
    for chunk in args.chunks:
        ours_rounds = times[f"ours_{chunk}"]["all_wall_cpu_s"]
        rows.append({"chunk": chunk, "ours_cpu_s": times[f"ours_{chunk}"]["cpu_s"], "trl_cpu_s": times["trl"]["cpu_s"],
                     "cpu_ratio": paired_ratio([o[1] for o in ours_rounds], [t[1] for t in trl_rounds]),
                     "wall_ratio": paired_ratio([o[0] for o in ours_rounds], [t[0] for t in trl_rounds]),
                     "ours_peak_mb": memory[f"ours_{chunk}"]["peak_mb"], "trl_peak_mb": memory["trl"]["peak_mb"],
                     "peak_ratio": memory[f"ours_{chunk}"]["peak_mb"] / memory["trl"]["peak_mb"],
                     "first_loss": {"ours": memory[f"ours_{chunk}"]["first_loss"],
                                    "trl": memory["trl"]["first_loss"]}})
    return {"case": case, "seq": args.seq, "memory": memory, "time": times, "rows": rows}


# ---------------------------------------------------------------- report
def markdown(results):
    """The results file as a Markdown table: one row per case, length and chunk size."""
    a = results["args"]
    lines = [f"Model: V = {a['vocab']:,}, d = {a['hidden']}, {a['layers']} layers, MLP {a['ffn']} "
             f"(body {results['sizes']['body_params'] / 1e6:.1f}M, tied head {results['sizes']['head_params'] / 1e6:.1f}M "
             f"params), fp32, {a['threads']} threads, {_options_text(a.get('options', []))}, "
             f"CPU only (TRL's torch fallback of its Triton head); "
             f"{a['reps']} paired rounds; 1-min load average {results['load_average'][0]:.1f} → "
             f"{results['load_average'][-1]:.1f} on {cores_text(results, results.get('cpu_count'))}.", "",
             "| case | tokens/seq | our chunk | ours CPU s | TRL CPU s | CPU ratio, median [min–max] | ours peak MB "
             "| TRL peak MB | peak ratio | first-step loss ours / TRL |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]
    for point in results["points"]:
        for row in point["rows"]:
            loss = row["first_loss"]
            lines.append(f"| {point['case']} | {point['seq']:,} | {row['chunk']:,} | {row['ours_cpu_s']:.2f} | "
                         f"{row['trl_cpu_s']:.2f} | {spread_text(row['cpu_ratio'])} | "
                         f"{row['ours_peak_mb']:,.0f} | {row['trl_peak_mb']:,.0f} | {row['peak_ratio']:.3f} | "
                         f"{loss['ours']:.6f} / {loss['trl']:.6f} |")
    measured = {(p["case"], p["seq"]) for p in results["points"]}
    missing = [f"{case} {seq:,}" for seq in a["seqs"] for case in a["cases"].split(",") if (case, seq) not in measured]
    if missing:
        lines += ["", f"Not measured (the run stopped before them): {', '.join(missing)}."]
    return "\n".join(lines)


def _options_text(options) -> str:
    return "both sides with " + " and ".join(o.replace("_", " ") for o in options) if options else \
        "no gradient checkpointing, torch's default AdamW"


def run(args):
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        raise ValueError(f"--cases: unknown {unknown}; expected some of {list(CASES)}")
    import transformers
    import trl

    run_args = {k: v for k, v in vars(args).items() if k not in ("worker", "workdir", "out", "seq", "chunk_size")}
    results = {"benchmark": "trl_step", "args": run_args, "sizes": model_sizes(args), "cpu": machine(),
               "commit": commit_of(Path(__file__).resolve().parents[2]),
               "load_average": [os.getloadavg()[0]], "points": [], "device": "CPU only (no GPU in this task)",
               "torch": torch.__version__, "trl": trl.__version__, "transformers": transformers.__version__}
    skip = ("worker", "workdir", "cases", "out")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HF_DATASETS_CACHE"] = str(Path(tmp) / "hf-datasets")
        for seq in args.seqs:
            args.seq, workdir = seq, Path(tmp) / f"seq{seq}"
            workdir.mkdir()
            spawn(__file__, args, "prepare", workdir, skip)
            for case in cases:
                results["points"].append(measure_point(args, workdir, case, skip))
                results["load_average"].append(os.getloadavg()[0])
                write_json(args.out, results)  # after every point: a run cut short keeps what it measured
                print(f"{case} {seq}: " + ", ".join(f"chunk {r['chunk']} CPU x {r['cpu_ratio']['median']:.3f}"
                                                    for r in results["points"][-1]["rows"]), flush=True)
    print(markdown(results))


def markdown_headline(results) -> str:
    """The index's line: ours / TRL CPU time per optimizer step over every case, length and chunk."""
    ratios = [row["cpu_ratio"]["median"] for point in results["points"] for row in point["rows"]]
    return (f"one optimizer step, ours / TRL 1.16 CPU time: {min(ratios):.2f}–{max(ratios):.2f} "
            f"(median per case, length and chunk; {len(ratios)} of them)")


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        workdir = Path(args.workdir)
        kind, _, case = args.worker.partition(":")
        result = (prepare(args, workdir) if kind == "prepare" else
                  time_worker(args, workdir, case) if kind == "time" else memory_worker(args, workdir, case, kind))
        print(json.dumps(result))
    else:
        run(args)


if __name__ == "__main__":
    main()
