"""``fpa toy-model`` and ``fpa toy-problems``: the embedded toy experiment's inputs."""

from __future__ import annotations

from fpa.cli.common import add_common, parse_json, setup
from fpa.io import write_jsonl
from fpa.provenance.record import Job
from fpa.toy.settings import toy_model_config
from fpa.toy.task import chain_lengths, make_mixed_problems


def toy_model(args) -> None:
    from fpa.toy.model import build_toy_model  # torch: not for toy-problems

    setup(args)
    try:
        cfg = toy_model_config(args.config_json.get("toy", {}), args.config_json["prompt_template"])
    except ValueError as error:
        raise ValueError(f"models.<model>.toy.{error}") from None
    job = Job("toy_base_model", args.config_json, {}, args.code)
    with job.output(args.out, directory=True) as tmp:
        metrics = build_toy_model(tmp, cfg, threads=args.threads)
    print(f"toy base model: final loss {metrics['final_loss']:.4f} in {metrics['train_seconds']} s")


def toy_problems(args) -> None:
    setup(args)
    bench = args.config_json or {}
    n = bench.get("n_problems", args.n)
    n_operands = bench.get("n_operands", args.n_operands)
    if n is None or n_operands is None:
        raise ValueError("toy-problems: give --n and --n-operands or a --config-json with n_problems and n_operands")
    try:
        lengths = chain_lengths(n_operands, bench.get("min_operands"))
    except ValueError as error:
        raise ValueError(f"toy-problems: {error}") from None
    min_operands = lengths.start
    records = make_mixed_problems(n, args.seed, split=args.split, lengths=lengths)
    if args.name:
        records = [{**record, "source": args.name} for record in records]
    config = {"split": args.split, "n": n, "n_operands": n_operands, "min_operands": min_operands,
              "seed": args.seed}
    rule = "toy_train_problems" if args.split == "train" else "toy_benchmark"  # the rules that run this command
    with Job(rule, config, {}, args.code).output(args.out) as tmp:
        write_jsonl(tmp, records)


def register(commands) -> None:
    parser = commands.add_parser("toy-model")
    add_common(parser, threads=True)
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=toy_model)

    parser = commands.add_parser("toy-problems")
    parser.add_argument("--config-json", type=parse_json, default=None,
                        help="the config slice of the benchmark or dataset (JSON), recorded in provenance")
    add_common(parser, config=False)
    parser.add_argument("--split", required=True, help="which problems: train, or a held-out test split")
    parser.add_argument("--name", default=None, help="benchmark name recorded as the records' source")
    parser.add_argument("--n", type=int, default=None, help="number of problems (default: the config slice's)")
    parser.add_argument("--n-operands", type=int, default=None,
                        help="operands per chain, the longest for training (default: the config slice's)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=toy_problems)
