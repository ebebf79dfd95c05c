"""Untrusted event text cannot reach the terminal as escape sequences or rich markup."""

from __future__ import annotations

import io

import orjson
from rich.console import Console

from condense_cli.dialects.openhands_v0.replay import load_view
from condense_cli.terminal.render import print_rich, sanitize
from tests.conftest import lines_of

HOSTILE = "\x1b]52;c;ZXZpbA==\x07 clear:\x1b[2J [bold red]x[/] \x9b31m \x08\x7f end"


def hostile_log(make_log):
    return make_log(
        lines_of(
            [
                {"id": 0, "source": "user", "action": "message", "args": {"content": HOSTILE}},
                {
                    "id": 1,
                    "source": "agent",
                    "observation": "run",
                    "content": HOSTILE,
                    "extras": {},
                    "cause": 0,
                },
                {
                    "id": 2,
                    "source": "agent",
                    "action": "condensation",
                    "args": {"forgotten_event_ids": [], "summary": HOSTILE, "summary_offset": 0},
                },
            ]
        )
    )


def test_sanitize_makes_controls_visible() -> None:
    assert sanitize("a\x1b[2Jb\tc\nd\x07") == "a\\x1b[2Jb\tc\nd\\x07"
    # a Windows line end is a newline; a carriage return alone (which would let the
    # text after it print over the text before) is shown
    assert sanitize("one\r\ntwo\rover\r") == "one\ntwo\\rover\\r"
    assert sanitize("one\r\ntwo", one_line=True) == "one\\r\\ntwo"


def test_plain_text_shows_escapes_literally(cli, make_log) -> None:
    out = cli("view", hostile_log(make_log)).stdout
    for raw in ("\x1b", "\x07", "\x9b", "\x08", "\x7f"):
        assert raw not in out
    assert "\\x1b]52;c;ZXZpbA==\\x07 clear:\\x1b[2J [bold red]x[/] \\x9b31m \\x08\\x7f end" in out


def test_rich_rendering_interprets_neither_escapes_nor_markup(make_log) -> None:
    view, _ = load_view(str(hostile_log(make_log)))
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="truecolor", width=200)
    print_rich(view, console, "header", full=True)
    out = buffer.getvalue()
    assert "\x1b]52" not in out  # no clipboard write
    assert "\x1b[2J" not in out  # no screen clear
    assert "\x07" not in out and "\x9b" not in out
    assert "[bold red]x[/]" in out  # markup shown as text
    assert out.count("\\x1b]52;c;ZXZpbA==") == 3  # message, observation, summary


def test_machine_formats_stay_exact(cli, make_log) -> None:
    log = hostile_log(make_log)
    lines = cli("view", log, "-f", "jsonl").stdout_bytes.splitlines()
    assert lines[1:] == log.read_bytes().splitlines()[:2]
    assert orjson.loads(lines[0])["content"] == HOSTILE
    data = orjson.loads(cli("view", log, "-f", "json").stdout_bytes)
    assert data["summary"] == HOSTILE
    assert data["events"][1]["args"]["content"] == HOSTILE


def test_error_messages_escape_the_bad_line(cli, make_log) -> None:
    first = b'{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}\n'
    log = make_log(first + b'\x1b[2J{"id": 1}\n')  # (a first line is never quoted)
    result = cli("view", log)
    assert "\x1b" not in result.stderr
    assert "\\x1b[2J" in result.stderr


# --- names and invisible characters ----------------------------------------------------

TITLE = "\x1b]0;pwned\x07"  # sets the window title and swallows what follows
SHOWN_TITLE = "\\x1b]0;pwned\\x07"


def test_bidi_and_zero_width_characters_are_shown_as_escapes(cli, make_log) -> None:
    text = "user\u202etxt.exe zero\u200bwidth \u2066isolate\u2069 mark\u200f bom\ufeff"
    log = make_log(
        lines_of([{"id": 0, "source": "user", "action": "message", "args": {"content": text}}])
    )
    out = cli("view", log).stdout
    assert "user\\u202etxt.exe zero\\u200bwidth \\u2066isolate\\u2069 mark\\u200f bom\\ufeff" in out
    for raw in ("\u202e", "\u200b", "\u2066", "\u2069", "\u200f", "\ufeff"):
        assert raw not in out
    view, _ = load_view(str(log))
    buffer = io.StringIO()
    print_rich(view, Console(file=buffer, force_terminal=True, width=200), "header", full=True)
    assert "\u202e" not in buffer.getvalue() and "user\\u202etxt.exe" in buffer.getvalue()


def test_a_missing_file_name_cannot_drive_the_terminal(cli, tmp_path) -> None:
    missing = tmp_path / f"a{TITLE}b.jsonl"
    result = cli("view", missing)
    assert result.exit_code == 1
    shown = str(tmp_path / f"a{SHOWN_TITLE}b.jsonl")
    assert result.stderr == f"Error: {shown}: no such file\nHint: check the path\n"


def test_names_are_escaped_in_every_message(cli, tmp_path) -> None:
    log = tmp_path / f"s{TITLE}\u202e.jsonl"
    log.write_bytes(lines_of([{"id": 0, "source": "user", "action": "message", "args": {}}]))
    shown = str(tmp_path / f"s{SHOWN_TITLE}\\u202e.jsonl")
    request = cli("request", log)
    assert request.stderr == f"appended condensation request 1 to {shown}\n"
    run = cli("run", log, "-t", "amortized", "--force")
    assert run.stderr.startswith("amortized_forgetting: nothing to forget")
    for result in (cli("view", log), cli("stats", log, "--no-tokens"), request, run):
        assert "\x1b" not in result.output and "\u202e" not in result.output, result.output
    assert cli("view", log).stdout.startswith(f"{shown} (openhands-v0): 1 event in view")
    torn = tmp_path / f"t{TITLE}\n.jsonl"
    torn.write_bytes(b'{"id": 0}\n')
    check = cli("check", torn)
    torn_shown = str(tmp_path / f"t{SHOWN_TITLE}\\n.jsonl")
    assert check.stdout == (f'{torn_shown}:1: has neither "action" nor "observation"\n')
