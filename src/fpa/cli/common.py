"""Arguments and helpers shared by the command modules."""

from __future__ import annotations

import argparse
import json
import logging


def add_common(parser: argparse.ArgumentParser, *, config: bool = True, threads: bool = False) -> None:
    if config:
        parser.add_argument("--config-json", required=True, type=parse_json,
                            help="the rule's config slice as JSON (recorded in provenance)")
    parser.add_argument("--code", default=None, help="code fingerprint of the rule (recorded in provenance)")
    if threads:
        parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")


def parse_json(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"invalid JSON ({error.msg})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def setup(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)
