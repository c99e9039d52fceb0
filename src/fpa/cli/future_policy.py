"""``fpa future-policy``: how well FPA's extrapolation from an anchor snapshot predicts a run's
later snapshots (``fpa.analysis.future_policy``); a CSV of (anchor_step, target_step, λ, KL).

Completions are sampled from each target snapshot on the curve benchmark, as the evaluation
samples (the config slice's ``benchmarks``: n and temperature); their shards stay in
``--work/<target snapshot>``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fpa.cli.common import add_common, add_work, sample_benchmarks
from fpa.evaluation.sampling import job_engine
from fpa.io import write_csv
from fpa.provenance.record import Job
from fpa.training.checkpoints import snapshot_name, snapshot_steps

FIELDS = ("anchor_step", "target_step", "lam", "kl_per_token", "kl_per_sequence", "tokens", "sequences")


def snapshot_dir(snapshots: str, step: int) -> str:
    path = Path(snapshots) / snapshot_name(step)
    if not path.is_dir():
        raise ValueError(f"{snapshots}: no snapshot at step {step}; the run has steps {snapshot_steps(snapshots)} "
                         "(future_policy.anchor_step / target_steps)")
    return str(path)


def future_policy_rows(args) -> list[dict]:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from fpa.analysis.future_policy import measure
    from fpa.samples.tokenize import encode_sample

    settings = args.config_json["future_policy"]
    lams = [float(lam) for lam in settings["lams"]]
    anchor_dir = snapshot_dir(args.snapshots, settings["anchor_step"])
    targets = {step: snapshot_dir(args.snapshots, step) for step in settings["target_steps"]}

    def load(model_dir):
        return AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()

    tokenizer = AutoTokenizer.from_pretrained(args.reference)
    reference, anchor = load(args.reference), load(anchor_dir)
    rows = []
    engine = job_engine(args.config_json, args.gpus)  # one for every target snapshot
    for step, target_dir in targets.items():
        per_target = argparse.Namespace(**{**vars(args), "model": target_dir,
                                           "benchmark": [(*args.benchmark, None)],
                                           "work": str(Path(args.work) / snapshot_name(step))})
        sample = next(sample_benchmarks(per_target, "future_policy", engine))
        # a completion cut at the generation limit has no EOS after it, as in training (fpa.samples.tokenize)
        encoded = [encode_sample(tokenizer, prompt, completion.text, settings["max_length"],
                                 ends_answer=completion.finish_reason != "length")
                   for prompt, completions in zip(sample.prompts, sample.completions) for completion in completions]
        result = measure(load(target_dir), anchor, reference, encoded, lams)
        for i, lam in enumerate(lams):
            rows.append({"anchor_step": settings["anchor_step"], "target_step": step, "lam": lam,
                         "kl_per_token": result["kl_per_token"][i], "kl_per_sequence": result["kl_per_sequence"][i],
                         "tokens": result["tokens"], "sequences": result["sequences"]})
            print(f"anchor {settings['anchor_step']} -> {step}, λ = {lam:g}: "
                  f"KL/token = {result['kl_per_token'][i]:.5f}")
    return rows


def future_policy(args) -> None:
    rows = future_policy_rows(args)
    inputs = {"reference": args.reference, "snapshots": args.snapshots, args.benchmark[0]: args.benchmark[1]}
    with Job("future_policy", {**args.config_json, "seed": args.seed}, inputs, args.code).output(args.out) as tmp:
        write_csv(tmp, FIELDS, rows)


def register(commands) -> None:
    parser = commands.add_parser("future-policy")
    add_common(parser, threads=True, gpus=True)
    parser.add_argument("--reference", required=True, help="the reference (base) model directory")
    parser.add_argument("--snapshots", required=True, help="the run's snapshot directory (step-*/)")
    parser.add_argument("--benchmark", nargs=2, required=True, metavar=("NAME", "FILE"),
                        help="the benchmark whose prompts the target snapshots complete")
    parser.add_argument("--seed", type=int, required=True, help="sampling seed")
    add_work(parser)
    parser.add_argument("--out", required=True, help="CSV: " + ", ".join(FIELDS))
    parser.set_defaults(handler=future_policy)
