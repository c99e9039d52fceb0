"""``fpa cache-reference``: the frozen reference's hidden states over the offline dataset, once."""

from __future__ import annotations

from transformers import AutoTokenizer

from fpa.cli.common import setup
from fpa.io import read_jsonl
from fpa.precision import BODY_FORMATS, CACHE_FORMATS, GATHER_FORMATS, torch_name
from fpa.provenance.record import Job
from fpa.reference.cache import write_reference_cache
from fpa.training.body import ATTENTION, is_packed


def cache_reference(args) -> None:
    setup(args)
    samples = read_jsonl(args.train) + read_jsonl(args.val)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    device = reference_device(args.device)
    config = {"max_length": args.max_length, "dtype": args.dtype, "precision": args.precision,
              "weights_dtype": args.weights_dtype, "attention": args.attention}
    job = Job("cache_reference", config, {"model": args.model, "train": args.train, "val": args.val}, args.code)
    with job.output(args.out, directory=True) as tmp:
        manifest = write_reference_cache(args.model, samples, tokenizer, tmp, max_length=args.max_length,
                                         dtype=args.dtype, precision=args.precision, device=device,
                                         weights_dtype=args.weights_dtype, packed=is_packed(args.attention))
        job.extra["cache"] = {k: v for k, v in manifest.items() if k != "samples"}
    print(f"cached {len(samples)} samples on {device}")


def reference_device(name: str) -> str:
    """``auto``: the GPU the job was given, else the CPU; ``cuda`` without a visible GPU is an error
    (a job that asked for a GPU and would compute for weeks on the CPU)."""
    import torch

    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is visible (CUDA_VISIBLE_DEVICES, the job's GPUs)")
    return name


def register(commands) -> None:
    parser = commands.add_parser("cache-reference")
    parser.add_argument("--model", required=True, help="the reference (base) model's directory (HF format)")
    parser.add_argument("--train", required=True)
    parser.add_argument("--val", required=True)
    parser.add_argument("--max-length", type=int, required=True, help="max prompt+completion tokens, as training truncates")
    parser.add_argument("--dtype", default=torch_name("bf16"), choices=[torch_name(name) for name in CACHE_FORMATS],
                        help="dtype of the cached hidden states; rule cache_reference passes the input precision "
                             "of the training's head products (fpa.memory.training.reference_cache_dtype)")
    parser.add_argument("--precision", default="fp32", choices=BODY_FORMATS,
                        help="the forward's precision: the training's (training.precision), as the policy's")
    parser.add_argument("--weights-dtype", default=torch_name("fp32"), choices=[torch_name(name) for name in GATHER_FORMATS],
                        help="the dtype the training computes its weights in (FSDP's gathered dtype)")
    parser.add_argument("--attention", default="masked", choices=ATTENTION,
                        help="the training's layout (training.attention): packed runs each batch without padding")
    parser.add_argument("--device", default="auto", choices=["auto", "cuda", "cpu"],
                        help="where the reference runs (the rule passes cuda when its job has a GPU)")
    parser.add_argument("--code", default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=cache_reference)
