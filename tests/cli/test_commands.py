"""The CLI's command table matches what each command module registers, and light commands stay light."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from fpa.cli import COMMANDS


def _registered(module: str) -> set[str]:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    importlib.import_module(f"fpa.cli.{module}").register(commands)
    return set(commands.choices)


def test_command_table_matches_the_modules():
    for module in set(COMMANDS.values()):
        assert _registered(module) == {c for c, m in COMMANDS.items() if m == module}, module


@pytest.mark.parametrize("command", ["aggregate", "fetch-data", "prepare-benchmark", "explain", "evaluate-code"])
def test_commands_without_models_do_not_import_torch(command):
    # these run in envs/tables.yaml and envs/eval_code.yaml jobs, and once per table cell's job
    code = f"import sys; from fpa.cli import build_parser; build_parser({command!r}); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_unknown_command_lists_every_command(capsys):
    from fpa.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["no-such-command"])
    assert exit_info.value.code == 2
    assert "check-config" in capsys.readouterr().err
