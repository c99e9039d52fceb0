"""Bytes a slot-decoder step copies from the device to the host, before and after the counter sampler.

    python benchmarks/generation/decode_host_bytes.py     # writes benchmarks/generation/results/decode_host_bytes.json

At Qwen3-4B's vocabulary (config/paper.yaml) and 64 and 256 rows, one decode step's draw is run on
the CPU with each sampler (``fpa.generation.samplers``), and the bytes of what each hands to the
host are read off the real tensors: the generator sampler (the decoder before the change, still the
CPU path) moves the float32 probabilities of every row over the vocabulary (its ``.cpu()``), and the
decoder read each step's largest position from the device twice (``int(positions.max())``, 8 bytes
each); the counter sampler returns the token ids (int64) on the device, which the loop reads once,
and the positions' maximum now comes from the host.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import torch
import yaml

from fpa.generation.samplers import CounterSampler, GeneratorSampler
from fpa.io import write_json

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "results" / "decode_host_bytes.json"
MODEL = "qwen3-4b-base"
ROWS = (64, 256)
POSITION_READS = 2  # int(positions.max()) in SlotCache.prepare_decode and in SlotDecoder._decode, before


def step_bytes(rows: int, vocabulary: int, temperature: float) -> dict:
    logits = torch.randn(rows, vocabulary, generator=torch.Generator().manual_seed(rows))
    generator = GeneratorSampler(rows, vocabulary, temperature)
    generator.admit(0, list(range(rows)))
    generator.draw(logits, 0, rows)
    moved_probabilities = torch.softmax(logits.float() / temperature, dim=-1)  # what its draw's .cpu() copies
    counter = CounterSampler(rows, vocabulary, temperature, torch.device("cpu"))
    counter.admit(0, list(range(rows)))
    tokens = counter.draw(logits, 0, rows)
    position = torch.zeros((), dtype=torch.long)
    before = moved_probabilities.nbytes + POSITION_READS * position.nbytes
    return {"rows": rows, "before_bytes": before, "after_bytes": tokens.nbytes, "ratio": before / tokens.nbytes}


def main() -> None:
    config = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    vocabulary = config["models"][MODEL]["architecture"]["vocab_size"]
    temperature = config["generation"]["temperature"]
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    record = {"benchmark": "decode_host_bytes", "commit": commit, "model": MODEL, "vocabulary": vocabulary,
              "steps": [step_bytes(rows, vocabulary, temperature) for rows in ROWS]}
    write_json(OUT, record)
    print(markdown(record))


def markdown(record: dict) -> str:
    lines = [f"Device-to-host bytes of one decode step at {record['model']}'s vocabulary "
             f"({record['vocabulary']:,}), commit `{record['commit']}`:", "",
             "| rows | before (generator sampler) | after (counter sampler) | before / after |", "|---|---|---|---|"]
    lines += [f"| {s['rows']} | {s['before_bytes']:,} | {s['after_bytes']:,} | {s['ratio']:,.0f} |"
              for s in record["steps"]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
