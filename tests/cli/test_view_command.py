"""`condense view` and `condense check` through CliRunner and a real subprocess."""

from __future__ import annotations

import orjson
import pytest

from tests.conftest import SAMPLES, condensation, hidden_setup_run, lines_of, msg

CODING = SAMPLES / "coding_session.jsonl"


def test_jsonl_prints_kept_lines_byte_for_byte_and_the_summary(cli) -> None:
    result = cli("view", CODING, "--format", "jsonl")
    assert result.exit_code == 0
    lines = result.stdout_bytes.splitlines()
    log_lines = CODING.read_bytes().splitlines()
    by_id = {orjson.loads(line)["id"]: line for line in log_lines}
    assert lines[0] == by_id[0]
    assert lines[1] == by_id[1]
    summary = orjson.loads(lines[2])
    assert summary["observation"] == "condense"
    assert "id" not in summary
    assert summary["content"].startswith("USER_CONTEXT")
    assert lines[3:] == [by_id[17], by_id[18], by_id[20], by_id[21]]


def test_json_object_shape(cli) -> None:
    result = cli("view", SAMPLES / "pending_request.jsonl", "--format", "json")
    data = orjson.loads(result.stdout_bytes)
    assert list(data) == [
        "dialect",
        "events",
        "summary",
        "unhandled_condensation_request",
        "forgotten",
    ]
    assert data["dialect"] == "openhands-v0"
    assert [e["id"] for e in data["events"]] == [0, 1, 2, 3, 8, 9, 11, 12, 13, 14]
    assert data["summary"] is None
    assert data["unhandled_condensation_request"] is True
    assert data["forgotten"] == 4


def test_json_includes_the_summary_in_the_events(cli) -> None:
    data = orjson.loads(cli("view", CODING, "-f", "json").stdout_bytes)
    assert data["events"][2] == {
        "source": "agent",
        "observation": "condense",
        "content": data["summary"],
        "extras": {},
    }


def test_text_piped_is_plain(cli) -> None:
    result = cli("view", CODING)
    out = result.stdout
    assert result.exit_code == 0
    assert "\x1b" not in out
    assert out.splitlines()[0] == (
        f"{CODING} (openhands-v0): 7 events in view, 14 forgotten, 2 condensations, summary at 2"
    )
    assert "=== summary ===" in out
    assert "#17 agent action:run" in out
    assert "#18 agent observation:run (answers #17)" in out


def test_text_shows_pending_request(cli) -> None:
    out = cli("view", SAMPLES / "pending_request.jsonl").stdout
    assert "condensation request pending" in out.splitlines()[0]


def test_upto_option(cli) -> None:
    data = orjson.loads(cli("view", CODING, "--upto", "9", "-f", "json").stdout_bytes)
    assert [e["id"] for e in data["events"]] == list(range(10))


def test_stdin_in_process(cli) -> None:
    content = lines_of([msg(0), msg(1), condensation(2, ids=[1])])
    result = cli("view", "-", "-f", "jsonl", input=content)
    assert result.stdout_bytes == content.splitlines()[0] + b"\n"


def test_subprocess_pipe_into_view(proc) -> None:
    first = proc("view", CODING, "--format", "jsonl")
    second = proc("view", "-", "--format", "json", input=first.stdout)
    assert second.returncode == 0, second.stderr
    data = orjson.loads(second.stdout)
    assert [e.get("id", "S") for e in data["events"]] == [0, 1, "S", 17, 18, 20, 21]


def test_python_dash_m_works_like_condense(proc) -> None:
    import subprocess
    import sys

    module = subprocess.run(
        [sys.executable, "-m", "condense_cli", "view", CODING, "-f", "jsonl"],
        capture_output=True,
        check=True,
    )
    assert module.stdout == proc("view", CODING, "-f", "jsonl").stdout


def test_closed_pipe_is_quiet(tmp_path) -> None:
    import subprocess

    from tests.conftest import CONDENSE

    big = tmp_path / "big.jsonl"
    big.write_bytes(lines_of(msg(i, "x" * 200) for i in range(20000)))
    done = subprocess.run(
        f"'{CONDENSE}' view '{big}' -f jsonl | head -c 10 >/dev/null",
        shell=True,
        capture_output=True,
        check=False,
    )
    assert b"Traceback" not in done.stderr
    assert b"Error" not in done.stderr


def test_check_exit_codes_and_lines(cli, make_log) -> None:
    good = make_log([msg(0), msg(1)])
    bad = make_log(b'{"id": 0, "action": "message"}\n{"id": 0, "action": "message"}\noops\n')
    result = cli("check", good, bad)
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{bad}:2: duplicate id 0: ids must increase down the file (line 1 has id 0)",
        f"{bad}:3: invalid JSON at column 1: unexpected character, expected a JSON value "
        "(line starts 'oops')",
    ]
    assert "1 of 2 logs failed the check (2 problems)" in result.stderr
    assert cli("check", good).exit_code == 0


def test_check_warnings_fail_only_with_strict(cli, make_log) -> None:
    log = make_log([msg(0), msg(1), condensation(2, start=1, end=7)])
    result = cli("check", log)
    assert result.exit_code == 0
    assert result.stdout == (
        f"{log}:3: warning: condensation 2 forgets ids after its own (up to 7); events "
        "appended later with those ids will be hidden (OpenHands allows this)\n"
    )
    assert cli("check", "--strict", log).exit_code == 1


def test_check_warns_about_offset_outside_the_view(cli, make_log) -> None:
    log = make_log([msg(0), msg(1), condensation(2, ids=[1], summary="s", offset=4)])
    out = cli("check", log).stdout
    assert "summary_offset 4 is past the end of the view it produces (1 event)" in out


def test_check_warns_about_a_summary_left_in_place(cli, make_log) -> None:
    log = make_log(
        [
            msg(0),
            msg(1),
            condensation(2, ids=[1], summary="s", offset=1),
            msg(3),
            condensation(4, ids=[3]),
        ]
    )
    out = cli("check", log).stdout
    assert out == (
        f"{log}:5: warning: condensation 4 has no summary, so the summary from line 3 "
        "stays in the view (as in OpenHands)\n"
    )


def test_check_validates_hidden_events_too(cli, make_log) -> None:
    action, observation = hidden_setup_run(1)
    log = make_log([msg(0), action, {**observation, "id": 1}, msg(3)])
    result = cli("check", log)
    assert result.exit_code == 1
    assert result.stdout == (
        f"{log}:3: duplicate id 1: ids must increase down the file (line 2 has id 1)\n"
    )
    assert cli("check", make_log([msg(0), action, observation, msg(3)])).exit_code == 0


def test_check_subprocess_on_samples(proc) -> None:
    done = proc("check", *sorted(SAMPLES.glob("*.jsonl")))
    assert done.returncode == 0
    assert done.stdout == b""
    assert b"3 logs ok" in done.stderr


def test_version(cli) -> None:
    assert cli("--version").stdout == "condense 0.1.0\n"


def registered_commands() -> list[str]:
    """Every command the app registers, its groups (`hook`, `mcp`) included."""
    from condense_cli.cli.app import COMMANDS

    return [entry.name for entry in COMMANDS]


def test_the_commands_are_the_ones_the_docs_walk() -> None:
    assert len(registered_commands()) == 15 and {"report", "cost", "search"} <= set(
        registered_commands()
    )


@pytest.mark.parametrize("command", registered_commands())
def test_the_registry_summary_is_the_first_sentence_of_the_commands_help(command: str) -> None:
    """`condense --help` lists the registry's summaries without loading a command:
    each must be what the command itself says first."""
    from condense_cli.cli.app import COMMANDS, load_command

    entry = next(e for e in COMMANDS if e.name == command)
    loaded = load_command(entry)
    assert loaded.name == command
    said = " ".join((loaded.help or "").split("\n\n")[0].split())
    assert said.startswith(entry.summary), (said, entry.summary)
    assert said == entry.summary or said[len(entry.summary)] == " "


@pytest.mark.parametrize("command", registered_commands())
def test_every_command_has_help_and_documentation(command: str, cli) -> None:
    from tests.conftest import ROOT

    result = cli(command, "--help")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: condense {command} ")
    assert f"`condense {command} " in (ROOT / "README.md").read_text()


def test_negative_ids_are_a_warning_never_an_error(cli, proc, make_log) -> None:
    log = make_log(
        [
            msg(0),
            msg(1),
            msg(2),
            condensation(3, ids=[-1, 1]),
            condensation(4, start=-1, end=0),
        ]
    )
    result = cli("check", log)
    assert result.exit_code == 0
    assert result.stdout == (
        f"{log}:4: warning: condensation 3: forgotten_event_ids holds -1; ids below 0 match "
        "no event and forget nothing (OpenHands writes -1, the id of its summary placeholder)\n"
        f"{log}:5: warning: condensation 4: its range -1..0 starts below 0; ids below 0 match "
        "no event and forget nothing (OpenHands writes -1, the id of its summary placeholder)\n"
    )
    assert cli("check", "--strict", log).exit_code == 1
    done = proc("view", log, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [e["id"] for e in orjson.loads(done.stdout)["events"]] == [2]
