"""``fpa train-online``: one online method (GRPO, DAPO), one seed, on the training problems
(``fpa.training.online.run``), in ``--processes`` ranks as ``fpa train``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from fpa.cli.common import parse_json, setup
from fpa.evaluation.sampling import make_prompts
from fpa.training import launch


def run_online_training(args) -> None:
    launch.enter_ranks(args)
    from fpa.io import read_jsonl
    from fpa.training.online.run import train_online
    from fpa.provenance.record import Job
    from fpa.training.checkpoints import move_snapshots
    from fpa.training.metrics import elapsed_at

    setup(args)
    run, sampling = args.run_json, args.config_json
    held_out = {sample["problem_id"] for sample in read_jsonl(args.exclude)} if args.exclude else set()
    problems = [problem for problem in read_jsonl(args.problems) if problem["id"] not in held_out]
    if not problems:
        raise ValueError(f"{args.problems}: no training problems left after excluding those of {args.exclude}")
    options = dict(model_dir=args.model, problems=problems,
                   prompts=make_prompts(sampling, [problem["problem"] for problem in problems], args.model),
                   method=run["objective"], params=run["params"], training=run["training"], grader=args.grader,
                   seed=args.seed, work_dir=args.work, generation=sampling["generation"], processes=args.processes,
                   code=args.code, stop_after=args.stop_after)
    if int(os.environ.get("RANK", "0")) != 0:
        train_online(**options, out_dir=None)
        return
    inputs = {"model": args.model, "problems": args.problems, **({"exclude": args.exclude} if args.exclude else {})}
    job = Job("train_online", {**run, **sampling, "method": args.method, "seed": args.seed, "grader": args.grader},
              inputs, args.code)
    with job.output(args.out, directory=True) as tmp:
        job.extra["summary"] = train_online(**options, out_dir=str(tmp))
        if args.stop_after is not None:
            raise SystemExit(f"stopped after {args.stop_after} steps (--stop-after); no checkpoint written")
    with job.output(args.snapshots, directory=True) as tmp:
        job.extra["snapshot_steps"] = move_snapshots(args.work, tmp)
        job.extra["snapshot_elapsed_s"] = elapsed_at(Path(args.out) / "training_metrics.csv",
                                                     job.extra["snapshot_steps"])
    shutil.rmtree(args.work, ignore_errors=True)
    print(json.dumps(job.extra["summary"], indent=2))


def register(commands) -> None:
    parser = commands.add_parser("train-online")
    parser.add_argument("--model", required=True, help="base model directory (HF format)")
    parser.add_argument("--problems", required=True, help="training problems (JSONL: id, problem, answer)")
    parser.add_argument("--exclude", default=None,
                        help="dataset split (JSONL with problem_id) whose problems are left out: the held-out validation")
    parser.add_argument("--run-json", required=True, type=parse_json, help="{objective: <online method>, params, training}")
    parser.add_argument("--config-json", required=True, type=parse_json,
                        help="{prompt_template, chat_template, generation}: the prompts and generation backend")
    parser.add_argument("--grader", required=True, help="the grader that labels the offline data (the reward)")
    parser.add_argument("--method", required=True, help="run name (table row)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--code", default=None)
    parser.add_argument("--work", required=True, help="directory of TRL's resumable checkpoints")
    parser.add_argument("--out", required=True)
    parser.add_argument("--snapshots", required=True, help="directory for the HF-format snapshots")
    parser.add_argument("--processes", type=int, default=1, help="ranks of the job (one per GPU); > 1 starts them with torchrun")
    parser.add_argument("--threads", type=int, default=1, help="the job's CPUs, split evenly over its processes")
    parser.add_argument("--stop-after", type=int, default=None,
                        help="stop after N optimizer steps without writing the output (resume tests)")
    parser.set_defaults(handler=run_online_training)
