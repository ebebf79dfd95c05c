"""Write docs/cli.md: every command's and subcommand's `--help`, as condense prints it.

`make docs` runs it; `tests/cli/test_reference.py` fails when docs/cli.md is not what
it writes, so the reference never drifts from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

from typer import _click as click
from typer.core import TyperGroup

from condense_cli.cli.app import COMMANDS, app, load_command

WIDTH = 100
OUT = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
HEAD = """# Command reference

Every command of `condense` and every option, as `--help` prints them. This page is
written by `make docs` (`tools/cli_reference.py`) from the code; a test keeps it so.
The [README](../README.md) says what each command is for; the pages of
[docs/](.) say how each works.
"""


def help_of(command: click.Command, path: list[str], parent: click.Context | None) -> str:
    """What `condense PATH --help` prints, at a fixed width."""
    ctx = click.Context(
        command, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH
    )
    return command.get_help(ctx)


def sections() -> list[str]:
    """The page's sections: the app, then each command (a group's subcommands after it)."""
    import typer.main

    root = typer.main.get_command(app)
    root_ctx = click.Context(root, info_name="condense", terminal_width=WIDTH)
    out = [f"## condense\n\n```\n{help_of(root, ['condense'], None)}\n```\n"]
    for entry in COMMANDS:
        command = load_command(entry)
        text = help_of(command, [entry.name], root_ctx)
        out.append(f"## condense {entry.name}\n\n```\n{text}\n```\n")
        if isinstance(command, TyperGroup):
            group_ctx = click.Context(command, info_name=entry.name, parent=root_ctx)
            for name in command.list_commands(group_ctx):
                sub = command.get_command(group_ctx, name)
                assert sub is not None
                text = help_of(sub, [entry.name, name], group_ctx)
                out.append(f"### condense {entry.name} {name}\n\n```\n{text}\n```\n")
    return out


def page() -> str:
    return "\n".join([HEAD, *sections()])


if __name__ == "__main__":
    OUT.write_text(page())
    sys.stdout.write(f"wrote {OUT}\n")
