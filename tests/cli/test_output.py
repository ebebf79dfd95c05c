"""What each command prints, and where: nothing on stdout when nothing was condensed,
truthful reports, singular and plural, usage lines, and --debug in either place."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.core.jsonlines import encode
from tests.conftest import SAMPLES, lines_of, msg

BROWSING = SAMPLES / "browsing_session.jsonl"  # 13 events, 3 of them browse observations


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


# --- run prints a view only when the condenser made one ------------------------------------


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        ((), "noop: the noop condenser never condenses"),
        (
            ("-t", "amortized"),
            "amortized_forgetting: the view has 13 events, within max_size 100, "
            "and no request is pending",
        ),
        (
            ("-t", "conversation_window"),
            "conversation_window: conversation_window condenses "
            "only on request (condense request, or --force)",
        ),
        (("-t", "recent"), "recent_events: the view has 13 events, within max_events"),
    ],
)
@pytest.mark.parametrize("dry_run", [(), ("--dry-run",)])
def test_a_condenser_that_does_not_fire_prints_nothing_on_stdout(
    args: tuple[str, ...], reason: str, dry_run: tuple[str, ...], cli, proc
) -> None:
    for run in (cli, proc):
        result = run("run", BROWSING, *args, *dry_run, "-f", "jsonl")
        out = result.stdout if run is cli else result.stdout.decode()
        err = result.stderr if run is cli else result.stderr.decode()
        assert out == ""
        assert err == f"{reason}; nothing appended\n"


def test_dry_run_prints_the_condensation_line_or_nothing(cli) -> None:
    fired = cli("run", BROWSING, "-t", "amortized", "-s", "max_size=8", "--dry-run")
    assert orjson.loads(fired.stdout)["action"] == "condensation"
    assert len(fired.stdout.splitlines()) == 1
    quiet = cli("run", BROWSING, "-t", "amortized", "-s", "max_size=80", "--dry-run")
    assert quiet.stdout == ""


def test_masking_condensers_still_print_their_view(cli) -> None:
    result = cli("run", BROWSING, "-t", "observation_masking", "-s", "attention_window=100")
    assert result.stdout.startswith(
        f"{BROWSING} after observation_masking (openhands-v0): 13 events in view"
    )
    assert result.stderr == "observation_masking: left the view unchanged; nothing appended\n"


def test_recent_events_reports_the_events_it_dropped(cli) -> None:
    result = cli("run", BROWSING, "-t", "recent", "-s", "max_events=4", "-f", "jsonl")
    ids = [orjson.loads(line)["id"] for line in result.stdout.splitlines()]
    assert ids == [0, 1, 11, 12]  # the system prompt, the user's task, the newest
    assert result.stderr == (
        "recent_events: dropped 9 of 13 events for this step; nothing appended\n"
    )


# --- one plural rule -------------------------------------------------------------------------


def test_singular_counts_read_as_singular(cli, make_log) -> None:
    one = make_log(
        lines_of(
            [
                msg(0),
                msg(1),
                {
                    "id": 2,
                    "source": "agent",
                    "action": "condensation",
                    "args": {"forgotten_event_ids": [1]},
                },
            ]
        )
    )
    assert cli("view", one).stdout.startswith(
        f"{one} (openhands-v0): 1 event in view, 1 forgotten, 1 condensation\n"
    )
    assert cli("check", one).stderr == "1 log ok (openhands-v0)\n"
    assert cli("run", one, "-t", "amortized").stderr == (
        "amortized_forgetting: the view has 1 event, within max_size 100, "
        "and no request is pending; nothing appended\n"
    )
    stats = cli("stats", one, "--no-tokens").stdout
    assert "; 1 event forgotten; 1 condensation; 0 requests\n" in stats
    two = make_log([msg(0), msg(1), msg(2)])
    forced = cli("run", two, "-t", "amortized", "-s", "max_size=4", "--force", "--dry-run")
    assert orjson.loads(forced.stdout)["message"] == "Forgot 1 event (ids 1)"
    assert forced.stderr.startswith("amortized_forgetting: forgot 1 event (ids 1), view 3 -> 2")


# --- usage lines and --debug -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        ("view", "Usage: condense view [OPTIONS] LOG..."),
        ("check", "Usage: condense check [OPTIONS] LOG..."),
        ("run", "Usage: condense run [OPTIONS] LOG..."),
        ("request", "Usage: condense request [OPTIONS] LOG"),
        ("stats", "Usage: condense stats [OPTIONS] LOG..."),
    ],
)
def test_usage_lines_name_the_arguments_plainly(command: str, usage: str, cli) -> None:
    assert cli(command, "--help").stdout.splitlines()[0] == usage
    missing = cli(command)
    assert missing.exit_code == 2
    assert missing.stderr.splitlines()[0] == usage


def test_debug_works_after_the_command_too(cli, make_log, monkeypatch) -> None:
    import condense_cli.cli.view as command

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(command, "read_log", broken)  # what `view` reads a log with
    log = make_log([msg(0)])
    for args in (("--debug", "view", log), ("view", log, "--debug"), ("view", "--debug", log)):
        result = cli(*args)
        assert result.exit_code == 1
        assert "Traceback" in result.stderr and "RuntimeError: disk on fire" in result.stderr
    quiet = cli("view", log)
    assert "Traceback" not in quiet.stderr


@pytest.mark.parametrize("indent", [False, True])
def test_encode_writes_past_orjsons_nesting_limit_as_orjson_would(indent: bool) -> None:
    shallow = {"a": [1, 2.5, None, True, "é\n"], "b": {}, "c": []}
    option = orjson.OPT_INDENT_2 if indent else None
    deep: Any = shallow
    for _ in range(600):
        deep = [deep]
    limit = sys.getrecursionlimit()
    written = encode(deep, indent=indent)
    assert sys.getrecursionlimit() == limit
    assert orjson.loads(written) == deep
    # past the limit the standard library writes, with orjson's separators
    inner = orjson.dumps(shallow, option=option)
    if indent:
        inner = b"\n".join(b"  " * 600 + line for line in inner.splitlines())
    assert inner.strip() in written
    assert encode(shallow, indent=indent) == orjson.dumps(shallow, option=option)
