"""One optimizer step of our trainer against TRL 1.16.0's trainers, CPU, side by side.

    python benchmarks/trl_step.py                                   # full run (V = 151,936; ~1 h on 2 idle cores)
    python benchmarks/trl_step.py --vocab 8192 --layers 2 --reps 1  # smoke run

Model and sizes are the engine benchmark's (``harness.build_model``: tied-head Qwen2,
fp32, 2 threads). The batch is one preference pair: one prompt of ``--prompt`` tokens,
a chosen and a rejected completion filling ``--seq`` tokens each (no padding on either
side). The reference is another random model of the same shape (seed 1; the policy is
seed 0), so that log π_θ − log π_ref is not 0 and equal losses mean something.

Cases (ours ↔ TRL):
  dpo  ↔ DPOTrainer (sigmoid, β = 0.1)     kto ↔ KTOTrainer (β = 0.05, λ_w = λ_l = 1)
  sft  ↔ SFTTrainer on the chosen completion (ours keeps only correct samples)
  offrl, fpa ↔ DPOTrainer: for scale only, not the same loss.

Ours is the trainer's own step: ``fpa.training.loop._open_session`` on files written
here (model dirs, train.jsonl, a reference cache from ``fpa.reference.cache``, fp32) and
``_optimizer_step`` (collate, cached reference, chunked head, objective, backward, clip,
AdamW, schedule). TRL's is ``trainer.training_step(model, batch)`` on the batch of its
own dataloader and collator, then clip, optimizer and scheduler step and zero_grad as
``Trainer``'s loop does; reference log-probs precomputed by TRL
(``precompute_ref_log_probs=True``) from the reference weights, which are then
replaced in place by the policy's. Gradient checkpointing, Liger and bf16 are off.

Before anything is timed, each worker asserts that both sides see the same token ids
and, for dpo/kto/sft, compute the same loss on the first step. Memory and time are
measured as in ``harness``: peak RSS per case and side in a fresh subprocess; time in
one subprocess per case holding both sides, steps interleaved, medians.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import tempfile
from pathlib import Path

import torch
from harness import add_model_args, build_model, interleaved, model_sizes, peak_memory, spawn

from fpa.io import write_json

PARITY = {"dpo": "dpo", "kto": "kto", "sft": "sft"}  # our objective -> TRL trainer computing the same loss
SCALE = {"offrl": "dpo", "fpa": "dpo"}
CASES = {**PARITY, **SCALE}
KTO_BETA = 0.05  # our KTO default (the paper's); TRL's default is 0.1
LR = 1e-6
# fp32 sums of ~10^3 token log-probs (|log p| ~ log V) agree to ~1e-3 nats across summation orders; a token
# more or less, or a shifted label, moves the loss by orders of magnitude more than this tolerance.
LOSS_RTOL = 1e-3


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add = parser.add_argument
    add_model_args(parser)
    add("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    add("--out", default=str(Path(__file__).parent / "results" / "trl_step.json"))
    add("--worker", help=argparse.SUPPRESS)
    add("--workdir", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ---------------------------------------------------------------- data and files
def _text(rng, n):
    """n printable ASCII characters: n tokens of the byte-level toy tokenizer (no merges)."""
    return "".join(chr(rng.randrange(33, 127)) for _ in range(n))


def prepare(args, workdir):
    """Tokenizer, policy and reference model dirs, our train split and reference cache, TRL's rows."""
    from fpa.reference.cache import write_reference_cache
    from fpa.toy.tokenizer import EOS, build_tokenizer

    tokenizer = build_tokenizer()
    tokenizer.model_max_length = args.seq  # the toy default (256) would only warn
    for name, seed in (("policy", 0), ("reference", 1)):
        build_model(args, seed).save_pretrained(workdir / name)
        tokenizer.save_pretrained(workdir / name)
    rng = random.Random(0)
    prompt, completion = _text(rng, args.prompt), args.seq - args.prompt - 1  # + eos
    samples = [{"id": f"p0-{label}", "problem_id": "p0", "prompt": prompt, "completion": _text(rng, completion),
                "reward": reward, "correct": reward > 0} for label, reward in (("chosen", 1.0), ("rejected", -1.0))]
    with open(workdir / "train.jsonl", "w") as f:
        f.writelines(json.dumps(s) + "\n" for s in samples)
    write_reference_cache(workdir / "reference", samples, tokenizer, workdir / "cache", max_length=args.seq,
                          dtype="float32")  # fp32 z_ref: the same reference log-probs as TRL's fp32 forward
    chosen, rejected = (s["completion"] + EOS for s in samples)  # TRL appends eos unless present
    rows = {"dpo": [{"prompt": prompt, "chosen": chosen, "rejected": rejected}],
            "kto": [{"prompt": prompt, "completion": chosen, "label": True},
                    {"prompt": prompt, "completion": rejected, "label": False}],
            "sft": [{"prompt": prompt, "completion": chosen}]}
    write_json(workdir / "trl_rows.json", rows)
    return {"completion_tokens": completion + 1}


# ---------------------------------------------------------------- the two sides
class Ours:
    """Our trainer's session and its optimizer step, for one objective."""

    def __init__(self, args, workdir, objective):
        from fpa.training import loop

        training = {"lr": LR, "batch_problems": 1, "micro_batch_problems": 1, "max_length": args.seq,
                    "chunk_size": args.chunk_size}
        train = str(workdir / "train.jsonl")
        self.run, _ = loop._open_session(str(workdir / "policy"), train, train, str(workdir / "cache"), objective,
                                         {}, loop.TrainConfig.from_dict(training), seed=0)
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
    common = dict(output_dir=str(workdir / f"trl-{kind}"), use_cpu=True, bf16=False, report_to="none",
                  gradient_checkpointing=False, use_liger_kernel=False, max_length=args.seq, learning_rate=LR,
                  disable_tqdm=True, dataloader_num_workers=0, seed=0)
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


def build_side(args, workdir, case, side):
    torch.set_num_threads(args.threads)
    return Ours(args, workdir, case) if side == "ours" else Trl(args, workdir, CASES[case])


def check_same_work(case, losses, ids):
    """Same token ids on both sides; for a parity case, the same first-step loss."""
    if not torch.equal(ids["ours"], ids["trl"]):
        raise AssertionError(f"{case}: the two sides' batches differ: ours {tuple(ids['ours'].shape)}, "
                             f"TRL {tuple(ids['trl'].shape)}")
    if case in PARITY and not math.isclose(losses["ours"], losses["trl"], rel_tol=LOSS_RTOL, abs_tol=1e-6):
        raise AssertionError(f"{case}: first-step losses differ: ours {losses['ours']!r}, TRL {losses['trl']!r}")


# ---------------------------------------------------------------- workers
def memory_worker(args, workdir, case, side):
    runner = build_side(args, workdir, case, side)
    memory, loss = peak_memory(runner.step)
    optimizer = runner.run.optimizer if side == "ours" else runner.trainer.optimizer
    return {**memory, "first_loss": loss, "input_ids": runner.input_ids().tolist(),
            "optimizer": type(getattr(optimizer, "optimizer", optimizer)).__name__}


def time_worker(args, workdir, case):
    sides = {side: build_side(args, workdir, case, side) for side in ("ours", "trl")}

    def check(warm):
        check_same_work(case, warm, {side: runner.input_ids() for side, runner in sides.items()})

    times = interleaved({side: runner.step for side, runner in sides.items()}, args.reps, check=check)
    return times


# ---------------------------------------------------------------- report
def report(args, memory, times, sizes, losses):
    lines = [f"model: body {sizes['body_params'] / 1e6:.1f}M params, tied head {sizes['head_params'] / 1e6:.1f}M; "
             f"V={args.vocab} d={args.hidden} layers={args.layers} ffn={args.ffn}; 1 pair of {args.seq} tokens "
             f"(prompt {args.prompt}); our chunk {args.chunk_size}; CPU fp32, {args.threads} threads",
             f"{'case':<16}{'TRL':<6}{'ours wall':>10}{'CPU':>8}{'peak MB':>9}{'TRL wall':>10}{'CPU':>8}{'peak MB':>9}"
             f"{'wall x':>8}{'CPU x':>7}{'peak x':>7}   first-step loss ours / TRL"]
    ratios = {}
    for case in times:
        ours, trl = times[case]["ours"], times[case]["trl"]
        mem_ours, mem_trl = memory[case]["peak_mb"], memory[f"trl_{CASES[case]}"]["peak_mb"]
        ratios[case] = {"wall": ours["wall_s"] / trl["wall_s"], "cpu": ours["cpu_s"] / trl["cpu_s"],
                        "peak": mem_ours / mem_trl}
        label = case if case in PARITY else f"{case} (scale)"
        lines.append(f"{label:<16}{CASES[case]:<6}{ours['wall_s']:>10.2f}{ours['cpu_s']:>8.2f}{mem_ours:>9.0f}"
                     f"{trl['wall_s']:>10.2f}{trl['cpu_s']:>8.2f}{mem_trl:>9.0f}{ratios[case]['wall']:>8.3f}"
                     f"{ratios[case]['cpu']:>7.3f}{ratios[case]['peak']:>7.3f}   "
                     f"{losses[case]['ours']:.6f} / {losses[case]['trl']:.6f}")
    targets = {}
    for case in (c for c in ratios if c in PARITY):
        targets[f"{case}: CPU time {ratios[case]['cpu']:.3f} x TRL <= 0.8"] = ratios[case]["cpu"] <= 0.8
        targets[f"{case}: peak memory {ratios[case]['peak']:.3f} x TRL <= 0.5"] = ratios[case]["peak"] <= 0.5
    lines += [f"[{'PASS' if ok else 'FAIL'}] {name}" for name, ok in targets.items()]
    return "\n".join(lines), ratios, targets


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        workdir = Path(args.workdir)
        kind, _, case = args.worker.partition(":")
        result = (prepare(args, workdir) if kind == "prepare" else
                  time_worker(args, workdir, case) if kind == "time" else memory_worker(args, workdir, case, kind))
        print(json.dumps(result))
        return
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        raise ValueError(f"--cases: unknown {unknown}; expected some of {list(CASES)}")
    sizes = model_sizes(args)
    print(f"model: body {sizes['body_params'] / 1e6:.1f}M params, head (tied) {sizes['head_params'] / 1e6:.1f}M; "
          f"V={args.vocab}; {args.threads} threads; cases {cases}", flush=True)
    load = [os.getloadavg()[0]]
    skip = ("worker", "workdir", "cases", "out")
    with tempfile.TemporaryDirectory() as workdir:
        os.environ["HF_DATASETS_CACHE"] = str(Path(workdir) / "hf-datasets")
        sizes.update(spawn(__file__, args, "prepare", workdir, skip))
        memory, losses = {}, {}
        for case in cases:  # memory first: its fresh processes also check the losses before anything is timed
            for side, key in (("ours", case), ("trl", f"trl_{CASES[case]}")):
                if key not in memory:
                    memory[key] = spawn(__file__, args, f"{side}:{case}", workdir, skip)
                    print(f"memory {key}: {memory[key]['peak_mb']:.0f} MB peak", flush=True)
            losses[case] = {"ours": memory[case]["first_loss"], "trl": memory[f"trl_{CASES[case]}"]["first_loss"]}
            print(f"{case}: first-step loss ours {losses[case]['ours']:.6f}, TRL {losses[case]['trl']:.6f}", flush=True)
            check_same_work(case, losses[case], {side: torch.tensor(memory[key]["input_ids"])
                                                 for side, key in (("ours", case), ("trl", f"trl_{CASES[case]}"))})
        for entry in memory.values():
            entry.pop("input_ids")
        times = {}
        for case in cases:
            times[case] = spawn(__file__, args, f"time:{case}", workdir, skip)
            print(f"time {case}: ours {times[case]['ours']['cpu_s']:.2f} CPU s, "
                  f"TRL {times[case]['trl']['cpu_s']:.2f} CPU s", flush=True)
    load.append(os.getloadavg()[0])
    table, ratios, targets = report(args, memory, times, sizes, losses)
    table += f"\n1-min load average at start/end: {load[0]:.1f} / {load[1]:.1f} on {os.cpu_count()} cores"
    print(table)
    import trl
    import transformers

    run_args = {k: v for k, v in vars(args).items() if k not in ("worker", "workdir", "out")}
    write_json(args.out, {"args": run_args, "sizes": sizes, "load_average": load, "memory": memory, "time": times,
                          "first_step_loss": losses, "ratios": ratios, "targets": targets, "table": table,
                          "device": "CPU only (no GPU in this task)", "torch": torch.__version__,
                          "trl": trl.__version__, "transformers": transformers.__version__})


if __name__ == "__main__":
    main()
