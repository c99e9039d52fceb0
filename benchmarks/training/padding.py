"""Padding in the offline batches, and what packing them would save on CPU.

    python benchmarks/training/padding.py RUN_DIR     # a finished default run; writes benchmarks/training/results/padding.json

The trainer's padded layouts (``training.attention: masked`` or ``causal``) pad each micro-batch to
its longest sequence (``packed`` lays it out in one row, ``fpa.training.packing``). This counts, over
every optimizer step of every seed of the run's config, the tokens of the batches
``fpa.training.batches`` draws (the trainer's own ``global_batch`` and ``collate``, padded) against
their padded size.

Then it times what packing would buy: the run's base model body, forward and backward on
1 thread (a training job's), over the micro-batches of the first ``--steps`` steps of the first
seed, once padded as the trainer pads them and once packed (first-fit decreasing into rows as
wide as the micro-batch's longest sequence, or ``--width`` tokens where that is wider; positions
restarting per sequence, so that
Transformers masks each sequence from the others; it does so only without a KV cache, hence
``use_cache=False``). The loss stand-in is the mean square of the
final hidden states at the completion-predicting positions, the same positions both ways, and
the benchmark checks that those hidden states agree. Rounds alternate which layout goes first;
the ratio packed / padded is taken per round.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: shared/ and the other folders
from shared.checkouts import commit_of  # noqa: E402

from fpa.io import write_json  # noqa: E402

OUT = Path(__file__).parent / "results" / "padding.json"


def pack_rows(lengths: list[int], width: int) -> list[list[int]]:
    """First-fit decreasing: the sequences (indices into ``lengths``) of each row of ``width`` tokens."""
    rows: list[list[int]] = []
    free: list[int] = []
    for index in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        row = next((r for r, room in enumerate(free) if room >= lengths[index]), None)
        if row is None:
            rows.append([])
            free.append(width)
            row = len(rows) - 1
        rows[row].append(index)
        free[row] -= lengths[index]
    return rows


def packed_layout(batch, width: int = 0) -> tuple:
    """(input_ids, position_ids, rows, positions) of ``batch`` (an ``fpa.training.batches.Batch``) packed
    into rows of ``width`` tokens or of its longest sequence, whichever is wider: the rows and positions
    of its completion-predicting tokens in the packed layout, in its own order."""
    import torch

    lengths = batch.attention_mask.sum(1).tolist()
    width = max(width, batch.input_ids.shape[1])
    layout = pack_rows(lengths, width)
    input_ids = torch.zeros((len(layout), width), dtype=torch.long)
    position_ids = torch.zeros((len(layout), width), dtype=torch.long)
    where = {}
    for row, members in enumerate(layout):
        start = 0
        for sequence in members:
            n = lengths[sequence]
            input_ids[row, start:start + n] = batch.input_ids[sequence, :n]
            position_ids[row, start:start + n] = torch.arange(n)
            where[sequence] = (row, start)
            start += n
        position_ids[row, start:] = torch.arange(width - start)  # the pad tail: a sequence of its own
    rows = torch.tensor([where[r][0] for r in batch.rows.tolist()])
    positions = torch.tensor([where[r][1] + p for r, p in zip(batch.rows.tolist(), batch.positions.tolist())])
    return input_ids, position_ids, rows, positions


def time_packing(model, micro: list, rounds: int, width: int) -> dict:
    """CPU and wall seconds of forward + backward over ``micro``, padded and packed, per round."""
    import torch

    torch.set_num_threads(1)
    body = model.get_decoder()
    packed = [packed_layout(b, width) for b in micro]
    layouts = {
        "padded": [(b.input_ids, {"attention_mask": b.attention_mask}, b.rows, b.positions) for b in micro],
        "packed": [(ids, {"position_ids": pos}, rows, positions) for ids, pos, rows, positions in packed],
    }

    def selected(layout, index):
        ids, extra, rows, positions = layouts[layout][index]
        return body(input_ids=ids, use_cache=False, **extra).last_hidden_state[rows, positions]

    with torch.no_grad():
        worst = max(float((selected("padded", i) - selected("packed", i)).abs().max()) for i in range(len(micro)))

    def run(layout):
        wall, cpu = time.perf_counter(), time.process_time()
        for index in range(len(micro)):
            selected(layout, index).pow(2).mean().backward()
        return {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}

    for layout in layouts:  # warm-up
        run(layout)
    per_round = []
    for index in range(rounds):
        order = ("padded", "packed") if index % 2 == 0 else ("packed", "padded")
        per_round.append({layout: run(layout) for layout in order})
    return {"width": width, "max_abs_hidden_diff": worst, "rounds": per_round,
            "padded_tokens": sum(b.input_ids.numel() for b in micro),
            "packed_tokens": sum(ids.numel() for ids, *_ in layouts["packed"]),
            "tokens": sum(int(b.attention_mask.sum()) for b in micro)}


def measure(run_dir: Path, timing_steps: int, rounds: int, widths: list[int]) -> dict:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from fpa.io import read_jsonl
    from fpa.planning import judge
    from fpa.training import batches as B

    config = judge([run_dir / "config" / "config.yaml"]).config
    training = config["training"]
    model = next(iter(config["models"]))
    samples = read_jsonl(run_dir / "results" / "datasets" / model / "train.jsonl")
    tokenizer = AutoTokenizer.from_pretrained(run_dir / "results" / "models" / model / "base")
    encoded = B.encode_dataset(tokenizer, samples, training["max_length"])
    groups = B.make_groups(samples)
    steps = B.steps_per_epoch(len(groups), training["batch_problems"]) * training["epochs"]
    tokens = padded = 0
    timed_batches = []
    for seed in config["seeds"]:
        for step in range(steps):
            batch = B.global_batch(groups, step, batch_problems=training["batch_problems"], seed=seed)
            for micro in B.micro_batches(batch, training["micro_batch_problems"]):
                collated = B.collate(micro, encoded, samples, tokenizer.pad_token_id)
                mask = collated.attention_mask
                tokens, padded = tokens + int(mask.sum()), padded + mask.numel()
                if seed == config["seeds"][0] and step < timing_steps:
                    timed_batches.append(collated)
    base = AutoModelForCausalLM.from_pretrained(run_dir / "results" / "models" / model / "base")
    return {"benchmark": "padding", "commit": commit_of(run_dir), "seeds": config["seeds"], "steps_per_seed": steps,
            "batch_problems": training["batch_problems"], "micro_batch_problems": training["micro_batch_problems"],
            "tokens": tokens, "padded_tokens": padded, "timing_steps": timing_steps,
            "packing": [time_packing(base.train(), timed_batches, rounds, width) for width in widths]}


def markdown(record: dict) -> str:
    share = 1 - record["tokens"] / record["padded_tokens"]
    seeds = ", ".join(map(str, record["seeds"]))
    return (f"The default run's offline batches (commit `{record['commit'][:7]}`: {record['batch_problems']} "
            f"problems × K samples per step, micro-batches of {record['micro_batch_problems']} problems, the "
            f"{record['steps_per_seed']} steps of each of "
            f"seeds {seeds}): {record['tokens']:,} tokens padded to {record['padded_tokens']:,}, "
            f"{100 * share:.1f} % padding.\n" + packing_markdown(record))


def packing_markdown(record: dict) -> str:
    timings = record.get("packing", [])
    if not timings:
        return ""
    first = timings[0]
    lines = [f"\nPacked instead: the first {record['timing_steps']} steps of seed {record['seeds'][0]}, "
             f"{first['tokens']:,} tokens padded to {first['padded_tokens']:,}; the base model body, forward and "
             f"backward on 1 thread, {len(first['rounds'])} rounds, ratios paired per round; the hidden states of "
             "the two layouts agree to the last column:\n",
             "| packed rows | packed tokens | clock | padded s | packed s | packed / padded, median [min–max] "
             "| max abs hidden diff |", "|---|---:|---|---:|---:|---|---:|"]
    for timing in timings:
        rows = "the longest sequence" + (f", or {timing['width']} tokens where wider" if timing["width"] else "")
        for clock in ("cpu_s", "wall_s"):
            padded = [r["padded"][clock] for r in timing["rounds"]]
            packed = [r["packed"][clock] for r in timing["rounds"]]
            ratios = [b / a for a, b in zip(padded, packed)]
            lines.append(f"| {rows} | {timing['packed_tokens']:,} | {clock.removesuffix('_s')} | "
                         f"{statistics.median(padded):.2f} | {statistics.median(packed):.2f} | "
                         f"{statistics.median(ratios):.2f} [{min(ratios):.2f}–{max(ratios):.2f}] | "
                         f"{timing['max_abs_hidden_diff']:.1e} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run_dir", type=Path, help="a directory where the default run finished")
    parser.add_argument("--steps", type=int, default=20, help="steps of the first seed to time (default 20)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--widths", type=int, nargs="+", default=[0, 256],
                        help="packed row widths to time (0: each micro-batch's longest sequence; default 0 256)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    record = measure(args.run_dir.resolve(), args.steps, args.rounds, args.widths)
    write_json(args.out, record)
    print(markdown(record), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
