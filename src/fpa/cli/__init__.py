"""fpa-bench's command line (``python -m fpa <command>``, ``fpa``): the commands (``fpa.cli.commands``)
and the entry that parses and runs one (``fpa.cli.entry``).

Each command module registers a subcommand; a command parses its arguments,
calls one library function, and writes its outputs atomically with a provenance
sidecar.
"""

from __future__ import annotations

from fpa.cli.commands import COMMANDS, SHARED_OPTION_HELP, Command
from fpa.cli.entry import PROCESS_STARTED, build_parser, main, overview

__all__ = ["COMMANDS", "PROCESS_STARTED", "SHARED_OPTION_HELP", "Command", "build_parser", "main", "overview"]
