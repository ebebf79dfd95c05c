"""`condense mcp`: the MCP server over the session the agent is running in, and its
registration with each client.

No `from __future__ import annotations` (see `options`).
"""

import sys
from typing import Annotated

import typer

from condense_cli.cli.guard import Command, guarded
from condense_cli.cli.options import Client, ClientArg, DryRunOpt, local_paths
from condense_cli.cli.output import tell_change

NAME = "condense"  # the server's name in the clients' settings (its tools: mcp__condense__…)
CODEX_STARTUP_SECONDS = 60  # how long Codex waits for the server to list its tools

app = typer.Typer(
    help="An MCP server (stdio) that lets the agent search and read back what its "
    "compactions forgot; `install` registers it with a client.",
    add_completion=False,
    rich_markup_mode=None,
    invoke_without_command=True,
)


@app.callback()
def serve(
    context: typer.Context,
    log: Annotated[
        str | None,
        typer.Option(
            "--log",
            metavar="LOG",
            callback=local_paths,
            help="The session to serve (default: the client's newest "
            "session of the current folder).",
        ),
    ] = None,
    client: Annotated[
        Client, typer.Option("--client", help="Whose session to look for without --log.")
    ] = Client.claude_code,
) -> None:
    """Serve the session's forgotten events over MCP on stdin/stdout."""
    if context.invoked_subcommand is not None:
        return
    from pathlib import Path

    from condense_cli.agent.mcp_server import Session, build, serve
    from condense_cli.agent.sessions import find_session

    cwd, home = Path.cwd(), Path.home()

    def locate() -> Path:
        return Path(log) if log is not None else find_session(client.value, cwd, home)

    serve(build(Session(locate)))


ServerScope = Annotated[
    bool,
    typer.Option(
        "--project/--user",
        help="Claude Code: the project's .mcp.json, or the user's ~/.claude.json; Gemini "
        "CLI: ./.gemini/settings.json or ~/.gemini/settings.json.",
    ),
]


@guarded
def install(
    client: ClientArg,
    project: ServerScope = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Register the server with the client, keeping the rest of its settings."""
    _change(client, project, dry_run, remove=False)


@guarded
def uninstall(
    client: ClientArg,
    project: ServerScope = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Remove the server from the client's settings (and nothing else)."""
    _change(client, project, dry_run, remove=True)


def _change(client: Client, project: bool, dry_run: bool, remove: bool) -> None:
    from pathlib import Path

    from condense_cli.agent.install import (
        condense_argv,
        edit_settings,
        json_change,
        toml_table_change,
        with_json_server,
    )
    from condense_cli.agent.sessions import codex_home

    argv = condense_argv(sys.argv[0], sys.executable, project)
    args = [*argv[1:], "mcp", "--client", client.value]
    if client is Client.codex:
        path = codex_home(Path.home()) / "config.toml"
        table = {
            "command": argv[0],
            "args": args,
            # how long Codex gives the server to list its tools (10 s by default): it
            # imports its MCP library first, which a busy machine slows; until it has,
            # a turn goes on without its tools (unless the user marks it `required`)
            "startup_timeout_sec": CODEX_STARTUP_SECONDS,
        }
        change = toml_table_change(path, ("mcp_servers", NAME), None if remove else table)
    elif client is Client.gemini_cli:
        path = (Path.cwd() if project else Path.home()) / ".gemini" / "settings.json"
        server = None if remove else {"command": argv[0], "args": args}
        change = json_change(path, lambda data: with_json_server(path, data, NAME, server))
    else:
        path = Path.cwd() / ".mcp.json" if project else Path.home() / ".claude.json"
        server = None if remove else {"type": "stdio", "command": argv[0], "args": args}
        change = json_change(path, lambda data: with_json_server(path, data, NAME, server))
    done = edit_settings(path, change, dry_run)
    what = f"{'removed' if remove else 'registered'} the condense MCP server"
    tell_change(path, done, dry_run, what)


for _name, _command in (("install", install), ("uninstall", uninstall)):
    app.command(_name, cls=Command)(_command)
