"""fpa-bench's command line: a few commands for you, and the steps Snakemake's rules run (``python -m fpa <command>``).

Each command module registers a subcommand; a command parses its arguments,
calls one library function, and writes its outputs atomically with a provenance
sidecar. Errors a user can fix (bad config, missing file) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import time
from typing import NamedTuple

PROCESS_STARTED = time.perf_counter()  # `python -m fpa` imports this module first


class Command(NamedTuple):
    module: str  # the fpa.cli module that registers it
    group: str  # where `fpa --help` lists it
    summary: str  # its one line there, and its description in `fpa COMMAND --help`


YOURS = "Commands for you"
DATA = "Pipeline steps (Snakemake's rules run these): data and models"
TRAIN = "Pipeline steps: training and evaluation"
OUTPUTS = "Pipeline steps: tables, figures and analyses"

# A command imports only its own module: the others pull in torch/transformers (~5 s per job, and
# envs that don't have them), and `fpa --help` imports none.
COMMANDS = {
    "explain": Command("info", YOURS, "the provenance chain behind one table cell: files, configs, rules, environment"),
    "methods": Command("info", YOURS, "list the registered offline objectives and online methods, with their defaults"),
    "check-config": Command("info", YOURS, "validate config files, each a whole experiment, as planning does"),
    "plan-memory": Command("memory", YOURS, "the cost before the run: each GPU job's memory per GPU, disk and GPU-hours"),
    "lock": Command("lock", YOURS, "pin the config's hub models and data files (revision and sha256)"),
    "gold-selfcheck": Command("data", YOURS, "check that every gold answer of the data mirror grades correct"),
    "plan-counts": Command("plan", YOURS, "the jobs, training runs, tables and figures each config/*.yaml plans"),
    "config-doc": Command("plan", YOURS, "config/README.md, every config key, written from the schema"),
    "fetch-data": Command("data", DATA, "copy a catalog file from the mirror or download it; verify its sha256"),
    "prepare-benchmark": Command("data", DATA, "normalise a benchmark's files into one JSONL"),
    "validate-benchmark": Command("data", DATA, "check the JSONL of a benchmark with source: file"),
    "math-train": Command("data", DATA, "the 12K MATH training problems (Lightman et al.)"),
    "code-train": Command("code", DATA, "TACO + APPS training problems with their tests"),
    "fetch-model": Command("data", DATA, "download a hub model once; check its pinned files"),
    "toy-model": Command("toy", DATA, "build and SFT-train the toy base model"),
    "toy-problems": Command("toy", DATA, "write toy arithmetic problems as benchmark records"),
    "sample": Command("dataset", DATA, "sample K completions per training problem"),
    "build-dataset": Command("dataset", DATA, "grade the samples, drop problems whose samples all agree, split"),
    "step-dpo-dataset": Command("dataset", DATA, "the offline dataset from the Math-Step-DPO-10K pairs"),
    "validation-benchmark": Command("dataset", DATA, "the held-out validation problems as a benchmark"),
    "cache-reference": Command("reference", DATA, "cache the reference model's final hidden states"),
    "train": Command("train", TRAIN, "train one offline method with one seed"),
    "train-online": Command("train_online", TRAIN, "train one online method (GRPO, DAPO) with one seed"),
    "evaluate": Command("evaluate", TRAIN, "Pass@1 of a checkpoint on its benchmarks"),
    "curve": Command("curve", TRAIN, "Pass@1 of each snapshot of a run on the curve benchmarks"),
    "select-checkpoint": Command("select", TRAIN, "the snapshot or final checkpoint with the best validation Pass@1"),
    "generate": Command("generate", TRAIN, "n completions per problem of the code benchmarks"),
    "evaluate-code": Command("code", TRAIN, "Pass@1 of generated code, graded in the sandbox"),
    "aggregate": Command("tables", OUTPUTS, "a table: mean ± std over seeds of every cell"),
    "reproduction": Command("tables", OUTPUTS, "how many cells of the compared tables match the paper"),
    "cost": Command("cost", OUTPUTS, "cost by stage (wall s, CPU s, max RSS) of the config's runs"),
    "figure": Command("figure", OUTPUTS, "draw one of the paper's figures from the runs"),
    "figure-table": Command("figure", OUTPUTS, "the numbers behind a figure (CSV, Markdown, HTML)"),
    "future-policy": Command("future_policy", OUTPUTS, "KL between FPA's extrapolated policy and later snapshots"),
    "entanglement": Command("entanglement", OUTPUTS, "cosine and norms of correct and incorrect score functions"),
}

# Options many commands share, explained once (a command's own help wins).
SHARED_OPTION_HELP = {
    "--out": "the output file or directory (written to a temporary path, then renamed)",
    "--code": "the code fingerprint of the rule's params (recorded in provenance; a change re-runs the job)",
    "--seed": "the random seed",
    "--train": "the offline dataset's training split (JSONL)",
    "--val": "the offline dataset's validation split (JSONL)",
    "--out-train": "the training split to write (JSONL)",
    "--out-val": "the validation split to write (JSONL)",
    **{f"--out-{kind}": f"the {name} to write" for kind, name in
       [("csv", "CSV"), ("md", "Markdown"), ("tex", "LaTeX"), ("html", "HTML"), ("png", "PNG"), ("pdf", "PDF")]},
}


class PlainHelpFormatter(argparse.HelpFormatter):
    """Help as plain text: the code quotes of docstrings (``x`` and `x`) are dropped."""

    def _format_text(self, text: str) -> str:
        return super()._format_text(text.replace("`", ""))

    def _get_help_string(self, action: argparse.Action) -> str:
        return (action.help or "").replace("`", "")


def overview() -> str:
    """`fpa --help`: the commands by group, with no command module imported."""
    width = max(map(len, COMMANDS)) + 2
    lines = ["usage: fpa COMMAND [options]     (fpa COMMAND --help: its options)", "",
             __doc__.splitlines()[0].replace("`", "")]
    for group in dict.fromkeys(command.group for command in COMMANDS.values()):
        lines += ["", f"{group}:"]
        lines += [f"  {name:{width}}{command.summary}" for name, command in COMMANDS.items() if command.group == group]
    return "\n".join(lines) + "\n"


def build_parser(command: str) -> argparse.ArgumentParser:
    """The parser of ``command``: only its module is imported."""
    parser = argparse.ArgumentParser(prog="fpa", formatter_class=PlainHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    module = COMMANDS[command].module
    importlib.import_module(f"fpa.cli.{module}").register(commands)
    for name, subparser in commands.choices.items():
        subparser.description = subparser.description or COMMANDS[name].summary
        subparser.formatter_class = PlainHelpFormatter
        for action in subparser._actions:
            if action.help is None and action.option_strings:
                action.help = SHARED_OPTION_HELP.get(action.option_strings[0])
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(overview(), end="", file=sys.stdout if argv else sys.stderr)
        sys.exit(0 if argv else 2)
    if argv[0] not in COMMANDS:
        close = difflib.get_close_matches(argv[0], COMMANDS, n=3)
        print(f"fpa: error: no command {argv[0]!r}" + (f" (did you mean {', '.join(close)}?)" if close else "")
              + "\n\n" + overview(), end="", file=sys.stderr)
        sys.exit(2)
    if not sys.stderr.isatty():  # a job's log: the hub's and Transformers' own bars would leave carriage returns
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    args = build_parser(argv[0]).parse_args(argv)
    from fpa.errors import ConfigError  # not before: `fpa --help` imports nothing

    args.argv = argv  # the command line, for a command that starts itself again (train's DDP ranks)
    try:
        args.handler(args)
    except (ConfigError, ValueError, FileNotFoundError) as error:
        print(f"fpa {args.command}: error: {error}", file=sys.stderr)
        sys.exit(2)
    finally:
        # a job's log, not a user at a terminal (nor a user's pipe: interactive commands never run as jobs)
        if not sys.stderr.isatty() and not getattr(args, "interactive", False):
            report_usage()


def report_usage() -> None:
    """The command's cost as the last line of its log (``fpa.provenance.record.usage_line``)."""
    from fpa.provenance.record import usage_line

    print(usage_line(PROCESS_STARTED), file=sys.stderr, flush=True)
