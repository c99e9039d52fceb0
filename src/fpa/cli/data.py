"""Data commands: ``fetch-data``, ``prepare-benchmark``, ``validate-benchmark``, ``math-train``,
``fetch-model``, ``gold-selfcheck``."""

from __future__ import annotations

from pathlib import Path

from fpa.catalog import declared_duplicates, find_entry, read_benchmarks_config, read_bounds
from fpa.cli.common import add_common, parse_json, setup
from fpa.data.benchmarks import load_benchmark
from fpa.data.download import fetch
from fpa.data.math_train import EXPECTED_SIZE, build_math_train
from fpa.data.models import fetch_snapshot, is_pinned
from fpa.data.validate import check_user_benchmark
from fpa.grading import get_gold_check
from fpa.io import write_json, write_jsonl
from fpa.provenance.record import Job
from fpa.samples.prompts import check_chat_template


def fetch_data(args) -> None:
    setup(args)
    entry = args.entry_json
    config = {"entry": entry, "mirror": args.mirror}
    with Job("fetch_data", config, {}, args.code).output(args.out) as tmp:
        fetch(entry, tmp, mirror_dir=args.mirror)
    pinned = entry["sha256"] is not None  # hub files may be unpinned (sha256: null): recorded, not checked
    print(f"{entry['name']}: {args.out} (sha256 {(entry['sha256'] or '')[:12]} "
          f"{'verified' if pinned else 'not pinned; see the provenance record'})")


def prepare_benchmark(args) -> None:
    """Normalise (and pool) the catalog files of one table column into {id, problem, answer, source}."""
    setup(args)
    catalog = read_benchmarks_config(args.catalog)
    parts = args.config_json["parts"]
    if len(parts) != len(args.files):
        raise ValueError(f"prepare-benchmark: {len(parts)} parts {parts} but {len(args.files)} files")
    entries = [find_entry(catalog, part)[1] for part in parts]
    records = [problem.to_dict() for entry, path in zip(entries, args.files)
               for problem in load_benchmark(entry["loader"], path, source=entry["name"], expected=entry["records"],
                                             bounds=read_bounds(entry), duplicates=declared_duplicates(entry))]
    job = Job("prepare_benchmark", args.config_json, dict(zip(parts, args.files)), args.code)
    with job.output(args.out) as tmp:
        write_jsonl(tmp, records)
    print(f"{args.name}: {len(records)} problems from {parts}")


def validate_benchmark(args) -> None:
    """A ``source: file`` benchmark (a user's own JSONL), checked before any job samples it."""
    setup(args)
    grader = args.config_json.get("grader")  # the rule always passes it; a hand-run check may leave it out
    records = check_user_benchmark(args.file, args.name, args.config_json.get("records"),
                                   get_gold_check(grader) if grader else None)
    with Job("validate_benchmark", args.config_json, {"file": args.file}, args.code).output(args.out) as tmp:
        write_jsonl(tmp, records)
    print(f"{args.name}: {len(records)} problems from {args.file}")


def math_train(args) -> None:
    setup(args)
    # A sample catalog (e.g. the tiny mirror) has neither 12,000 problems nor MATH500 inside MATH test.
    problems = build_math_train(args.math_train, args.math_test, args.math500, args.math_perturb,
                                expected_size=None if args.sample else EXPECTED_SIZE)
    inputs = {"math_train": args.math_train, "math_test": args.math_test, "math500": args.math500,
              **{f"math_perturb_{i}": path for i, path in enumerate(args.math_perturb)}}
    with Job("math_train_problems", {"recipe": "MATH train + (MATH test - MATH500), no MATH-P"}, inputs,
             args.code).output(args.out) as tmp:
        write_jsonl(tmp, [problem.to_dict() for problem in problems])
    print(f"{len(problems)} training problems")


def fetch_model(args) -> None:
    """A hub model's snapshot, from the model mirror or the hub, checked against its pins (``fpa lock``)."""
    setup(args)
    model = args.config_json
    where = f"model {model['hub_id']}"
    job = Job("fetch_model", model, {}, args.code)
    with job.output(args.out, directory=True) as tmp:
        job.extra["snapshot"] = fetch_snapshot(model, tmp, args.model_mirror or None, where)
        if model.get("chat_template"):
            check_chat_template(tmp, where)
    pinned = "verified" if is_pinned(model) else "not pinned: run `fpa lock` on the config"
    print(f"{where}: {args.out} at revision {job.extra['snapshot']['revision']} "
          f"({len(job.extra['snapshot']['files'])} files, {pinned})")


def build_models(args) -> None:
    """Each hub model of the config built from its ``architecture`` entry into a model mirror (a hub cache)
    that ``fetch_model`` reads (``fpa.data.rehearsal_models``; the tokenizer wheels from PyPI, kept)."""
    from fpa.data.rehearsal_models import build_mirror

    setup(args)
    job = Job("build_models", args.config_json, {}, args.code)
    with job.output(args.out, directory=True) as tmp:
        job.extra["commits"] = build_mirror(args.config_json, Path(tmp), Path(args.wheels))
    for hub_id, commit in job.extra["commits"].items():
        print(f"{hub_id}: built at {commit}")


def gold_selfcheck(args) -> None:
    from fpa.data.selfcheck import gold_selfcheck as run

    report = run(args.mirror, workers=args.workers)
    for name, counts in report["benchmarks"].items():
        print(f"{name:22s} {counts['correct']:5d} / {counts['total']:5d}")
    for exception in report["exceptions"]:
        print(f"  exception: {exception['benchmark']} {exception['id']} gold={exception['gold']!r} "
              f"rule={exception['rule']} known={exception['known']}")
    if args.out:
        write_json(args.out, report)
    if any(not e["known"] for e in report["exceptions"]):
        raise SystemExit("gold self-check: undocumented exceptions (see above)")


def register(commands) -> None:
    parser = commands.add_parser("fetch-data")
    parser.add_argument("--entry-json", required=True, type=parse_json, help="catalog entry")
    parser.add_argument("--mirror", default=None, help="local mirror directory (no network)")
    parser.add_argument("--code", default=None)
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=fetch_data)

    parser = commands.add_parser("prepare-benchmark")
    add_common(parser)
    parser.add_argument("files", nargs="+", help="the catalog files of the column's parts, in order")
    parser.add_argument("--name", required=True, help="the benchmark's name (the table column)")
    parser.add_argument("--catalog", required=True, help="the file catalog (config/benchmarks.yaml)")
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=prepare_benchmark)

    parser = commands.add_parser("validate-benchmark")
    add_common(parser)
    parser.add_argument("file", help="the benchmark's JSONL of {id, problem, answer} records")
    parser.add_argument("--name", required=True, help="the benchmark's name (the table column)")
    parser.add_argument("--out", required=True, help="the validated records, as evaluation reads them")
    parser.set_defaults(handler=validate_benchmark)

    parser = commands.add_parser("math-train")
    parser.add_argument("--math-train", required=True, help="MATH's train split (JSONL)")
    parser.add_argument("--math-test", required=True, help="MATH's test split (JSONL)")
    parser.add_argument("--math500", required=True, help="MATH500 (JSONL): taken out of the test split")
    parser.add_argument("--math-perturb", nargs="+", default=[], help="MATH-P files: never in training")
    parser.add_argument("--sample", action="store_true",
                        help="the files are samples (catalog with `sample:`): skip the 12K size checks")
    parser.add_argument("--code", default=None)
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=math_train)

    parser = commands.add_parser("fetch-model")
    add_common(parser)
    parser.add_argument("--model-mirror", default="",
                        help="a Hugging Face hub cache directory holding the model (no network); empty: the hub")
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=fetch_model)

    parser = commands.add_parser("build-models")
    add_common(parser)
    parser.add_argument("--wheels", required=True, help="directory of the tokenizer wheels (downloaded once)")
    parser.add_argument("--out", required=True, help="the model mirror to write (a Hugging Face hub cache)")
    parser.set_defaults(handler=build_models)

    parser = commands.add_parser("gold-selfcheck")
    parser.add_argument("mirror", help="data mirror directory (e.g. ../shared/data)")
    parser.add_argument("--workers", type=int, default=2, help="grading processes")
    parser.add_argument("--out", default=None, help="write the report as JSON")
    parser.set_defaults(handler=gold_selfcheck)
