"""``fpa train``: one method, one seed, in ``--processes`` DDP ranks on each of ``--nodes`` nodes
(``fpa.training.launch``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from fpa.cli.common import parse_json, setup
from fpa.training import launch


def run_training(args) -> None:
    launch.enter_ranks(args, nodes=args.nodes)
    from fpa.provenance.record import Job  # after the launch: its process needs no torch
    from fpa.training.checkpoints import move_snapshots
    from fpa.training.loop import train
    from fpa.training.metrics import elapsed_at

    setup(args)
    run = args.run_json
    inputs = {"model": args.model, "train": args.train, "val": args.val}
    if args.reference:
        inputs["reference"] = args.reference
    options = dict(model_dir=args.model, train_path=args.train, val_path=args.val, reference_dir=args.reference,
                   objective_name=run["objective"], params=run["params"], training=run["training"], seed=args.seed,
                   work_dir=args.work, code=args.code, stop_after=args.stop_after)
    if int(os.environ.get("RANK", "0")) != 0:  # data-parallel workers: rank 0 writes the checkpoint
        train(**options, out_dir=None)
        return
    job = Job("train", {**run, "method": args.method, "seed": args.seed}, inputs, args.code)
    with job.output(args.out, directory=True) as tmp:
        summary = train(**options, out_dir=str(tmp))
        job.extra["summary"] = summary
        if args.stop_after is not None:
            raise SystemExit(f"stopped after {args.stop_after} steps (--stop-after); no checkpoint written")
    if args.snapshots:
        with job.output(args.snapshots, directory=True) as tmp:
            job.extra["snapshot_steps"] = move_snapshots(args.work, tmp)
            job.extra["snapshot_elapsed_s"] = elapsed_at(Path(args.out) / "training_metrics.csv",
                                                         job.extra["snapshot_steps"])
    shutil.rmtree(args.work, ignore_errors=True)  # resumable checkpoints are not needed once the output exists
    print(json.dumps(summary, indent=2))


def register(commands) -> None:
    parser = commands.add_parser("train")
    parser.add_argument("--model", required=True, help="base model directory (HF format)")
    parser.add_argument("--train", required=True)
    parser.add_argument("--val", required=True)
    parser.add_argument("--reference", default=None, help="reference cache directory")
    parser.add_argument("--run-json", required=True, type=parse_json, help="{objective, params, training}")
    parser.add_argument("--method", required=True, help="run name (table row)")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--code", default=None)
    parser.add_argument("--work", required=True, help="directory of resumable checkpoints")
    parser.add_argument("--out", required=True)
    parser.add_argument("--snapshots", default=None,
                        help="directory for the HF-format snapshots taken every training.snapshot_every steps")
    parser.add_argument("--processes", type=int, default=1,
                        help="DDP ranks on each node (one per GPU, or CPU ranks on gloo); > 1 starts them with torchrun")
    parser.add_argument("--nodes", type=int, default=1,
                        help="nodes of the job's SLURM allocation; > 1: srun starts a torchrun on each, which meet "
                             "at the first node")
    parser.add_argument("--threads", type=int, default=1,
                        help="the job's CPUs on each node, split evenly over its processes (torch threads of each)")
    parser.add_argument("--stop-after", type=int, default=None,
                        help="stop after N optimizer steps without writing the output (resume tests)")
    parser.set_defaults(handler=run_training)
