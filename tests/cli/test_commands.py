"""The CLI's command table matches what each command module registers, and light commands stay light."""

from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys

import pytest

from fpa.cli import COMMANDS, build_parser


def _registered(module: str) -> set[str]:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    importlib.import_module(f"fpa.cli.{module}").register(commands)
    return set(commands.choices)


def test_command_table_matches_the_modules():
    for module in {command.module for command in COMMANDS.values()}:
        assert _registered(module) == {c for c, command in COMMANDS.items() if command.module == module}, module


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_and_option_is_described_in_plain_text(command):
    parser = build_parser(command)
    [subparsers] = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    subparser = subparsers.choices[command]
    assert subparser.description
    undescribed = [action.dest for action in subparser._actions if not action.help]
    assert not undescribed, f"fpa {command}: options without help: {undescribed}"
    assert "`" not in subparser.format_help()


def test_help_groups_the_commands_and_imports_no_command_module():
    code = ("import sys; from fpa.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit as e:\n    assert e.code == 0\n"
            "print(sorted(m for m in sys.modules if m.startswith('fpa.')), file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the face and its two modules
    assert result.stderr.strip() == "['fpa.cli', 'fpa.cli.commands', 'fpa.cli.entry']"
    assert result.stdout.index("Commands for you:") < result.stdout.index("explain") < result.stdout.index("Pipeline steps")
    assert "`" not in result.stdout


@pytest.mark.parametrize("command", ["aggregate", "fetch-data", "prepare-benchmark", "explain", "evaluate-code"])
def test_commands_without_models_do_not_import_torch(command):
    # these run in envs/tables.yaml and envs/eval_code.yaml jobs, and once per table cell's job
    code = f"import sys; from fpa.cli import build_parser; build_parser({command!r}); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_unknown_command_lists_every_command(capsys):
    from fpa.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["explian"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no command 'explian' (did you mean explain?)" in err and "check-config" in err


@pytest.mark.parametrize("set_by_user", [{}, {"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "5"}])
def test_every_job_has_the_wait_policy_unless_its_user_set_one(monkeypatch, capsys, set_by_user):
    """A command's process, and the threads and ranks it starts, has the project's OpenMP wait policy, set
    before torch loads (issue 58); a user who set any part of it keeps their own, none of ours mixed in."""
    from fpa.cli import main
    from fpa.cli.entry import JOB_ENVIRONMENT

    for name in JOB_ENVIRONMENT:
        monkeypatch.setenv(name, "restored after the test")
        monkeypatch.delenv(name)
    for name, value in set_by_user.items():
        monkeypatch.setenv(name, value)
    main(["methods"])
    assert "offrl" in capsys.readouterr().out
    assert {name: os.environ.get(name) for name in JOB_ENVIRONMENT} == {
        name: set_by_user.get(name) if set_by_user else value for name, value in JOB_ENVIRONMENT.items()}


@pytest.mark.parametrize("code", [None, "a1b2"])
def test_only_a_rules_command_ends_its_log_with_the_usage_line(tmp_path, code):
    """A rule's command (it carries the rule's code fingerprint, --code) ends its log with its cost, which
    the cost table reads; a user's, into a file or a pipe rather than a terminal, does not."""
    from fpa.provenance.record import USAGE_PREFIX

    command = [sys.executable, "-m", "fpa", "toy-problems", "--split", "test", "--n", "2", "--n-operands", "3",
               "--seed", "1", "--out", str(tmp_path / "toy.jsonl"), *(["--code", code] if code else [])]
    stderr = subprocess.run(command, capture_output=True, text=True, check=True).stderr
    assert stderr.splitlines()[-1].startswith(USAGE_PREFIX) if code else USAGE_PREFIX not in stderr
    methods = subprocess.run([sys.executable, "-m", "fpa", "methods"], capture_output=True, text=True, check=True)
    assert USAGE_PREFIX not in methods.stderr
