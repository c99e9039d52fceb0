"""``fpa sample`` (K samples per training problem), ``fpa build-dataset`` (grade, drop, split),
``fpa step-dpo-dataset`` (the offline dataset from Math-Step-DPO-10K pairs, no sampling),
``fpa check-prompt-budget`` (a hub model's training prompts against max_length, before it samples) and
``fpa validation-benchmark`` (a dataset's held-out problems, with their answers, as a benchmark)."""

from __future__ import annotations

import json

from fpa.cli.common import add_common, add_work, setup
from fpa.data.prompt_budget import check_prompt_budget, longest_prompt
from fpa.data.step_dpo import build_step_dpo_dataset, read_step_dpo
from fpa.data.step_dpo import validation_problems as step_dpo_validation_problems
from fpa.evaluation.sampling import generation_key, make_prompts
from fpa.generation.model_len import job_max_model_len
from fpa.generation.parallel import make_backend
from fpa.generation.shards import generate_sharded, remove_work
from fpa.generation.stops import stop_words
from fpa.grading import dataset_graders, get_grader
from fpa.io import read_jsonl, write_json, write_jsonl
from fpa.provenance.record import Job
from fpa.samples.offline import build_offline_dataset, grade_samples, validation_problems


def sample(args) -> None:
    setup(args)
    dataset, generation = args.config_json["dataset"], args.config_json["generation"]
    job = Job("sample_offline", args.config_json, {"model": args.model, "problems": args.problems}, args.code)
    problems = read_jsonl(args.problems)
    prompts = make_prompts(args.config_json, [p["problem"] for p in problems], args.model)
    backend = make_backend(generation, args.model, args.gpus,
                           max_model_len=job_max_model_len(generation, args.model, prompts))
    completions = generate_sharded(
        backend, prompts, n=dataset["k"], temperature=dataset["temperature"],
        max_new_tokens=generation["max_new_tokens"], seed=dataset["seed"], work_dir=args.work,
        key_parts=generation_key(job), shard_rows=args.shard_rows,
        stop_words=stop_words(args.config_json["prompt_template"], generation["stop"]),
    )
    # finish_reason "length": cut at max_new_tokens, so training appends no EOS (fpa.samples.tokenize)
    records = [
        {"id": f"{problem['id']}/{index}", "problem_id": problem["id"], "sample_index": index,
         "prompt": prompt, "completion": completion.text, "finish_reason": completion.finish_reason,
         "stop": completion.stop, "answer": problem["answer"]}
        for problem, prompt, outs in zip(problems, prompts, completions)
        for index, completion in enumerate(outs)
    ]
    with job.output(args.out) as tmp:
        write_jsonl(tmp, records)
    remove_work(args.work)  # finished shards are not needed once the output exists
    print(f"{len(records)} samples for {len(problems)} problems")


def prompt_budget(args) -> None:
    """Before a hub model samples: its longest training prompt against every max_length that will encode it."""
    from transformers import AutoTokenizer

    setup(args)
    budget = args.config_json
    job = Job("check_prompt_budget", budget, {"model": args.model, "problems": args.problems}, args.code)
    problems = read_jsonl(args.problems)
    prompts = make_prompts(budget["prompts"], [p["problem"] for p in problems], args.model)
    longest = longest_prompt(AutoTokenizer.from_pretrained(args.model), [p["id"] for p in problems], prompts)
    check_prompt_budget(budget["model"], longest, budget["max_length"])
    with job.output(args.out) as tmp:
        write_json(tmp, {"longest_prompt": {"problem_id": longest[0], "tokens": longest[1]},
                         "max_length": dict(budget["max_length"])})
    print(f"longest training prompt: {longest[1]} tokens (problem {longest[0]}); max_length: {budget['max_length']}")


def build_dataset(args) -> None:
    setup(args)
    dataset = args.config_json["dataset"]
    graded = grade_samples(read_jsonl(args.samples), get_grader(dataset_graders()[dataset["source"]]))
    built = build_offline_dataset(graded, k=dataset["k"], validation_fraction=dataset["validation_fraction"],
                                  seed=dataset["seed"])
    write_dataset(Job("build_dataset", args.config_json, {"samples": args.samples}, args.code), built, args)


def write_dataset(job, built, args) -> None:
    """The train and validation splits, each with its provenance and the dataset's summary."""
    job.extra["summary"] = built.summary
    with job.output(args.out_train) as train_tmp:
        write_jsonl(train_tmp, built.train)
    with job.output(args.out_val) as val_tmp:
        write_jsonl(val_tmp, built.val)
    print(json.dumps(built.summary, indent=2))


def step_dpo_dataset(args) -> None:
    setup(args)
    dataset = args.config_json["dataset"]
    if args.config_json.get("chat_template") and args.model is None:
        raise ValueError("step-dpo-dataset: --model is required with chat_template (its tokenizer renders the prompts)")
    records = read_step_dpo(args.pairs)
    problem_prompts = make_prompts(args.config_json, [record["prompt"] for record in records], args.model)
    built = build_step_dpo_dataset(records, problem_prompts, validation_fraction=dataset["validation_fraction"],
                                   seed=dataset["seed"])
    inputs = {"pairs": args.pairs, **({"model": args.model} if args.model else {})}
    write_dataset(Job("step_dpo_dataset", args.config_json, inputs, args.code), built, args)


def validation_benchmark(args) -> None:
    setup(args)
    val = read_jsonl(args.val)
    if args.pairs is not None:
        source = {"pairs": args.pairs}
        records = step_dpo_validation_problems(read_step_dpo(args.pairs), val, where=args.pairs)
    else:
        source = {"problems": args.problems}
        records = validation_problems(read_jsonl(args.problems), val)
    job = Job("validation_benchmark", {}, {**source, "val": args.val}, args.code)
    with job.output(args.out) as tmp:
        write_jsonl(tmp, records)
    print(f"{len(records)} validation problems")


def register(commands) -> None:
    parser = commands.add_parser("sample")
    add_common(parser, threads=True, gpus=True)
    parser.add_argument("--model", required=True, help="the base model's directory (HF format)")
    parser.add_argument("--problems", required=True, help="the training problems (JSONL)")
    add_work(parser)
    parser.add_argument("--out", required=True)
    parser.set_defaults(handler=sample)

    parser = commands.add_parser("check-prompt-budget")
    add_common(parser)
    parser.add_argument("--model", required=True, help="the base model's directory (HF format): its tokenizer")
    parser.add_argument("--problems", required=True, help="the training problems (JSONL)")
    parser.add_argument("--out", required=True, help="the longest prompt's tokens and the max_length settings (JSON)")
    parser.set_defaults(handler=prompt_budget)

    parser = commands.add_parser("build-dataset")
    add_common(parser)
    parser.add_argument("--samples", required=True, help="the offline samples (JSONL), graded here")
    parser.add_argument("--out-train", required=True)
    parser.add_argument("--out-val", required=True)
    parser.set_defaults(handler=build_dataset)

    parser = commands.add_parser("step-dpo-dataset")
    add_common(parser)
    parser.add_argument("--pairs", required=True, help="Math-Step-DPO-10K records (JSONL, the dataset's fields)")
    parser.add_argument("--model", default=None, help="base model directory, for its chat template (chat_template)")
    parser.add_argument("--out-train", required=True)
    parser.add_argument("--out-val", required=True)
    parser.set_defaults(handler=step_dpo_dataset)

    parser = commands.add_parser("validation-benchmark")
    add_common(parser, config=False)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--problems", help="the training problems (JSONL of {id, problem, answer}; code: the "
                                           "answer is the test spec)")
    source.add_argument("--pairs", help="the Math-Step-DPO-10K pairs the dataset was built from "
                                        "(dataset.source step_dpo)")
    parser.add_argument("--val", required=True, help="the offline dataset's validation split (JSONL samples)")
    parser.add_argument("--out", required=True, help="benchmark records (JSONL of {id, problem, answer})")
    parser.set_defaults(handler=validation_benchmark)
