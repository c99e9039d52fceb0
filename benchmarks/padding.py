"""Padding in the offline batches: the share of pad tokens in the batches the trainer draws.

    python benchmarks/padding.py RUN_DIR     # a finished default run; writes benchmarks/results/padding.json

Our trainer pads each micro-batch to its longest sequence and does not pack sequences
(TRL's ``padding_free`` does). This counts, over every optimizer step of every seed of the
run's config, the tokens of the batches ``fpa.training.batches`` draws (the trainer's own
``global_batch`` and ``collate``) against their padded size: what packing could save.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from checkouts import commit_of

from fpa.io import write_json

OUT = Path(__file__).parent / "results" / "padding.json"


def measure(run_dir: Path) -> dict:
    from transformers import AutoTokenizer

    from fpa.config import read_config_file, validate_config
    from fpa.io import read_jsonl
    from fpa.training import batches as B

    config = validate_config(read_config_file(run_dir / "config" / "config.yaml"))
    training = config["training"]
    model = next(iter(config["models"]))
    samples = read_jsonl(run_dir / "results" / "datasets" / model / "train.jsonl")
    tokenizer = AutoTokenizer.from_pretrained(run_dir / "results" / "models" / model / "base")
    encoded = B.encode_dataset(tokenizer, samples, training["max_length"])
    groups = B.make_groups(samples)
    steps = B.steps_per_epoch(len(groups), training["batch_problems"]) * training["epochs"]
    tokens = padded = 0
    for seed in config["seeds"]:
        for step in range(steps):
            batch = B.global_batch(groups, step, batch_problems=training["batch_problems"], seed=seed)
            for micro in B.micro_batches(batch, training["micro_batch_problems"]):
                mask = B.collate(micro, encoded, samples, tokenizer.pad_token_id).attention_mask
                tokens, padded = tokens + int(mask.sum()), padded + mask.numel()
    return {"benchmark": "padding", "commit": commit_of(run_dir), "seeds": config["seeds"], "steps_per_seed": steps,
            "batch_problems": training["batch_problems"], "micro_batch_problems": training["micro_batch_problems"],
            "tokens": tokens, "padded_tokens": padded}


def markdown(record: dict) -> str:
    share = 1 - record["tokens"] / record["padded_tokens"]
    seeds = ", ".join(map(str, record["seeds"]))
    return (f"The default run's offline batches (commit `{record['commit'][:7]}`: {record['batch_problems']} "
            f"problems × K samples per step, micro-batches of {record['micro_batch_problems']} problems, the "
            f"{record['steps_per_seed']} steps of each of "
            f"seeds {seeds}): {record['tokens']:,} tokens padded to {record['padded_tokens']:,}, "
            f"{100 * share:.1f} % padding.\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path, help="a directory where the default run finished")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    record = measure(args.run_dir.resolve())
    write_json(args.out, record)
    print(markdown(record), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
