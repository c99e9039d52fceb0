"""``fpa entanglement``: the gradient-entanglement pilot at a model on its offline dataset and,
as the paper's pilot, on preference datasets (``fpa.analysis.entanglement``,
``fpa.analysis.preference_pairs``); a CSV with one row per (variant, pair)."""

from __future__ import annotations

import json

from fpa.cli.common import add_common, setup
from fpa.io import write_csv
from fpa.provenance.record import Job

FIELDS = ("variant", "problem_id", "cosine", "norm_correct", "norm_incorrect", "tokens_correct", "tokens_incorrect")


def entanglement(args) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from fpa.analysis.entanglement import measure, measure_preference, select_pairs
    from fpa.analysis.preference_pairs import draw_pairs
    from fpa.io import read_jsonl

    setup(args)
    settings = args.config_json
    pairs = select_pairs(read_jsonl(args.train), max_pairs=settings["pairs"], seed=args.seed)
    if not pairs:
        raise ValueError(f"{args.train}: no problem with both a correct and an incorrect sample")
    # the pilot's other datasets, read before the model loads so a bad file fails first
    preference = {name: draw_pairs(source["loader"], source["path"], max_pairs=settings["pairs"], seed=args.seed)
                  for name, source in args.preference_json.items()}
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    rows = measure(model, tokenizer, pairs, max_length=settings["max_length"])
    for name, drawn in preference.items():
        rows += measure_preference(model, tokenizer, name, drawn, max_length=settings["max_length"])
    for variant in dict.fromkeys(row["variant"] for row in rows):
        cosines = [row["cosine"] for row in rows if row["variant"] == variant]
        print(f"{variant}: {len(cosines)} pairs, mean cosine {sum(cosines) / len(cosines):.4f}")
    inputs = {"model": args.model, "train": args.train,
              **{name: source["path"] for name, source in args.preference_json.items()}}
    with Job("entanglement", {**settings, "seed": args.seed}, inputs, args.code).output(args.out) as tmp:
        write_csv(tmp, FIELDS, rows)


def register(commands) -> None:
    parser = commands.add_parser("entanglement")
    add_common(parser, threads=True)
    parser.add_argument("--model", required=True, help="the model (HF directory), the base in the paper's pilot")
    parser.add_argument("--train", required=True, help="the offline dataset (JSONL samples with `correct`)")
    parser.add_argument("--preference-json", type=json.loads, default={},
                        help='preference datasets measured beside it, {name: {"loader": imdb|hh_rlhf, "path": JSONL}} '
                             "(fpa.analysis.preference_pairs); each name is a row variant")
    parser.add_argument("--seed", type=int, required=True, help="seed drawing the pairs")
    parser.add_argument("--out", required=True, help="CSV: " + ", ".join(FIELDS))
    parser.set_defaults(handler=entanglement)
