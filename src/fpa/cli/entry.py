"""fpa-bench's command line: a few commands for you, and the steps Snakemake's rules run (``python -m fpa <command>``).

``main`` parses the command line with the parser of its command alone (``build_parser``) and calls the
command's handler; errors a user can fix (bad config, missing file) print one line and exit 2.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import time

from fpa.cli.commands import COMMANDS, SHARED_OPTION_HELP

PROCESS_STARTED = time.perf_counter()  # `python -m fpa` imports this module first (through fpa.cli)
#: Every job's OpenMP wait policy, set before torch loads its OpenMP runtime, which reads it then; its threads
#: inherit it. A thread that waits at the end of a parallel region spins GOMP_SPINCOUNT times (libgomp, torch's
#: runtime on Linux; about 0.1 ms), then sleeps; PASSIVE makes the runtimes that do not read GOMP_SPINCOUNT
#: sleep at once. libgomp's default spins about 300,000 times (a few ms): on a host whose other jobs keep the
#: cores busy the spinning thread took turns on a core with the one it waited for, and counted as CPU time; a
#: thread that sleeps at once took longer to wake for the next op on a quiet host. Both measured in
#: benchmarks/default_run/README.md (wait_policy_sft.py). Where threads run, not what they compute: the
#: results are the same bits. A user who sets any of these keeps their own policy, none of ours.
JOB_ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE", "GOMP_SPINCOUNT": "10000"}


def set_job_environment() -> None:
    """``JOB_ENVIRONMENT`` in this process's environment, unless its user set any of it."""
    if not any(name in os.environ for name in JOB_ENVIRONMENT):
        os.environ.update(JOB_ENVIRONMENT)


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
    set_job_environment()
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
        # a job's log: every rule's command carries its code fingerprint (--code); a user's command,
        # at a terminal or into a pipe, does not
        if getattr(args, "code", None) is not None:
            report_usage()


def report_usage() -> None:
    """The command's cost as the last line of its log (``fpa.provenance.record.usage_line``)."""
    from fpa.provenance.record import usage_line

    print(usage_line(PROCESS_STARTED), file=sys.stderr, flush=True)
