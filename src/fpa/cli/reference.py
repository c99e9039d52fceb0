"""``fpa cache-reference``: the frozen reference's hidden states over the offline dataset, once."""

from __future__ import annotations

from transformers import AutoTokenizer

from fpa.cli.common import setup
from fpa.io import read_jsonl
from fpa.provenance.record import Job
from fpa.reference.cache import write_reference_cache


def cache_reference(args) -> None:
    setup(args)
    samples = read_jsonl(args.train) + read_jsonl(args.val)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    config = {"max_length": args.max_length, "dtype": args.dtype}
    job = Job("cache_reference", config, {"model": args.model, "train": args.train, "val": args.val}, args.code)
    with job.output(args.out, directory=True) as tmp:
        manifest = write_reference_cache(args.model, samples, tokenizer, tmp, max_length=args.max_length,
                                         dtype=args.dtype)
        job.extra["cache"] = {k: v for k, v in manifest.items() if k != "samples"}
    print(f"cached {len(samples)} samples")


def register(commands) -> None:
    parser = commands.add_parser("cache-reference")
    parser.add_argument("--model", required=True, help="the reference (base) model's directory (HF format)")
    parser.add_argument("--train", required=True)
    parser.add_argument("--val", required=True)
    parser.add_argument("--max-length", type=int, required=True, help="max prompt+completion tokens, as training truncates")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"],
                        help="dtype of the cached hidden states")
    parser.add_argument("--code", default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=cache_reference)
