"""`fastprox COMMAND` imports that command's module and what it uses, not the other
commands' (their summaries are needed only by ``fastprox --help``): a command's
start-up is part of every run's time."""
import ast
import subprocess
import sys

from fastprox.cli import COMMANDS, build_parser


def test_a_command_imports_no_other_command():
    for command in ("train", "predict", "info"):
        code = ("import sys\nfrom fastprox.cli import build_parser\nbuild_parser(%r)\n"
                "print(sorted(m for m in sys.modules if m.startswith('fastprox.cli.')))" % command)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        imported = {name.rpartition(".")[2] for name in ast.literal_eval(out)}
        assert command in imported and not imported & (set(COMMANDS) - {command}), (command, imported)


def test_the_whole_parser_lists_every_command_with_its_summary():
    text = build_parser().format_help()
    for command in COMMANDS:
        assert f"    {command} " in text
