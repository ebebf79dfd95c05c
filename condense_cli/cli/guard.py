"""How a command runs: its usage line and `--debug`, and every error it meets turned
into one message and an exit code (`guarded`).

No `from __future__ import annotations` (see `options`).
"""

import functools
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from typer.core import TyperCommand, TyperOption

from condense_cli.core.errors import CondenseError, OutputError, os_hint
from condense_cli.core.interrupts import INTERRUPTED
from condense_cli.core.redact import mask
from condense_cli.core.text import sanitize
from condense_cli.terminal.output import say, silence_stdout

state: dict[str, Any] = {"debug": False, "command": "condense"}


F = TypeVar("F", bound=Callable[..., Any])


def set_debug(ctx: Any, param: Any, value: bool) -> bool:
    if value:
        state["debug"] = True
    return value


class Command(TyperCommand):
    """A command whose usage line reads `condense view [OPTIONS] LOG` (typer writes
    `{LOG}`), and which takes --debug after its name as well as before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(
            TyperOption(
                param_decls=["--debug"],
                is_flag=True,
                default=False,
                expose_value=False,
                is_eager=True,
                callback=set_debug,
                help="Show the traceback of unexpected errors.",
            )
        )

    def invoke(self, ctx: Any) -> Any:
        state["command"] = ctx.command_path  # for the hint of a usage error
        return super().invoke(ctx)

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


def fail(message: str, hint: str | None, code: int) -> typer.Exit:
    say(f"Error: {message}")
    if hint:
        say(f"Hint: {hint}")
    return typer.Exit(code)


def guarded(command: F) -> F:
    """Turn core errors into one message and an exit code; never a traceback.

    A closed pipe on stdout (`condense check | head`) never changes a verdict.
    A command on one log writes to stdout only once its verdict is settled (errors
    are raised before any output), so a closed pipe ends it with that verdict: 0.
    `check` writes as it goes, so it carries on silently and exits 1 if a log failed
    (see `emit`). Over many logs, `stats`, `audit` and `view` write a log's rows as it
    is done and say a log that cannot be read on stderr; a closed pipe ends them with
    0, as nothing more can be read of their output. Ctrl-C exits 130 without a
    traceback.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except OutputError as exc:
            silence_stdout()
            raise fail(exc.message, exc.hint, exc.exit_code) from None
        except CondenseError as exc:
            raise fail(exc.message, exc.hint, exc.exit_code) from None
        except BrokenPipeError:
            silence_stdout()
            raise typer.Exit(0) from None
        except KeyboardInterrupt:
            raise typer.Exit(INTERRUPTED) from None
        except (typer.Exit, typer.Abort):
            raise
        except OSError as exc:  # the system refused a file (a full disk, a protected file)
            where = f"{exc.filename}: " if exc.filename else ""
            raise fail(f"{where}{exc.strerror or exc}", os_hint(exc.errno), 1) from None
        except Exception as exc:
            if state["debug"]:
                sys.stderr.write(sanitize(mask(traceback.format_exc())))
            raise fail(
                f"unexpected {type(exc).__name__}: {exc}",
                "this is a bug in condense; rerun with --debug for the traceback and report it",
                1,
            ) from None

    return wrapper  # type: ignore[return-value]


def usage_error(message: str) -> Exception:
    """A misuse of the command running (exit 2), with where its help is."""
    from condense_cli.core.errors import ConfigError

    return ConfigError(message, hint=f"see {state['command']} --help")
