"""Every registered dialect does every command it can: the checklist a new dialect
must pass.

Parametrized over the dialect registry (`tests/stories.py`): a dialect added to
`condense_cli.dialects.DIALECTS` runs here as soon as its test package tells the
story (`tests/dialects/<package>/story.py`), each case for the dialects it applies to
(`stories.able`: by their capability flags, and whether their logs record
condensations). What a dialect cannot do is refused clearly (the last cases). The
commands run as real subprocesses.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests import stories
from tests.conftest import ROOT

Proc = Callable[..., subprocess.CompletedProcess[bytes]]


EVERY = pytest.mark.parametrize("dialect", stories.DIALECTS)


def view_json(proc: Proc, log: Path) -> dict[str, object]:
    done = proc("view", log, "--format", "json")
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = orjson.loads(done.stdout)
    return data


@EVERY
def test_each_dialect_has_its_story_page_and_readme_row(dialect: str) -> None:
    package = stories.package(dialect)
    assert (ROOT / "tests" / "dialects" / package / "story.py").is_file()
    assert (ROOT / "docs" / "dialects" / f"{dialect}.md").is_file()
    assert f"| `{dialect}` |" in (ROOT / "README.md").read_text()


@EVERY
def test_view_replays_the_story(dialect: str, tmp_path: Path, proc: Proc) -> None:
    log = stories.write(dialect, tmp_path / "story.jsonl")
    data = view_json(proc, log)
    assert data["dialect"] == dialect
    assert data["unhandled_condensation_request"] is False
    assert stories.DONE in orjson.dumps(data["events"]).decode()
    jsonl = proc("view", log, "--format", "jsonl")
    assert jsonl.returncode == 0 and stories.DONE.encode() in jsonl.stdout
    text = proc("view", log)
    assert text.returncode == 0 and dialect in text.stdout.decode().splitlines()[0]


@pytest.mark.parametrize("dialect", stories.able(condensed=True))
def test_the_view_after_a_condensation_holds_its_summary(
    dialect: str, tmp_path: Path, proc: Proc
) -> None:
    data = view_json(proc, stories.write(dialect, tmp_path / "story.jsonl"))
    assert data["summary"] == stories.SUMMARY
    assert stories.FIRST not in orjson.dumps(data["events"]).decode()


@pytest.mark.parametrize("dialect", stories.able("converts_messages"))
def test_the_view_as_the_messages_the_agent_sends(dialect: str, tmp_path: Path, proc: Proc) -> None:
    log = stories.write(dialect, tmp_path / "story.jsonl")
    messages = orjson.loads(proc("view", log, "--format", "messages").stdout)
    assert isinstance(messages, list) and messages
    assert stories.DONE in orjson.dumps(messages).decode()
    if stories.condenses(dialect):
        assert stories.SUMMARY in orjson.dumps(messages).decode()


@EVERY
def test_check_and_stats_name_the_dialect(dialect: str, tmp_path: Path, proc: Proc) -> None:
    log = stories.write(dialect, tmp_path / "story.jsonl")
    check = proc("check", log)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"1 log ok ({dialect}" in check.stderr.decode()
    stats = proc("stats", log, "--format", "json", "--no-tokens")
    assert stats.returncode == 0, stats.stderr
    numbers = orjson.loads(stats.stdout)
    assert numbers["dialect"] == dialect
    assert len(numbers["condensations"]) == (1 if stories.condenses(dialect) else 0)


@pytest.mark.parametrize("dialect", stories.able("appends"))
def test_a_request_then_a_run_append_what_the_dialect_replays(
    dialect: str, tmp_path: Path, proc: Proc
) -> None:
    log = stories.write(dialect, tmp_path / "story.jsonl", condensed=False)
    before = log.read_bytes()
    request = proc("request", log)
    assert request.returncode == 0, request.stderr
    assert log.read_bytes().startswith(before) and len(log.read_bytes()) > len(before)
    assert view_json(proc, log)["unhandled_condensation_request"] is True
    run = proc("run", log, "--type", "amortized_forgetting", "--set", "max_size=4")
    assert run.returncode == 0, run.stderr
    assert b"appended to" in run.stderr
    after = view_json(proc, log)
    assert after["unhandled_condensation_request"] is False
    assert after["forgotten"] > 0
    check = proc("check", log, "--strict")
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("dialect", stories.able("audits", condensed=True))
def test_audit_reads_the_condensation(dialect: str, tmp_path: Path, proc: Proc) -> None:
    log = stories.write(dialect, tmp_path / "story.jsonl")
    audit = proc("audit", log, "--format", "json")
    assert audit.returncode == 0, audit.stderr
    assert len(orjson.loads(audit.stdout)["condensations"]) == 1


@pytest.mark.parametrize("dialect", stories.able("simulates"))
def test_simulate_reads_the_history(dialect: str, tmp_path: Path, proc: Proc) -> None:
    log = stories.write(dialect, tmp_path / "story.jsonl")
    simulate = proc("simulate", log, "--type", "amortized_forgetting", "--format", "json")
    assert simulate.returncode == 0, simulate.stderr
    assert orjson.loads(simulate.stdout)["dialect"] == dialect


# --- what a dialect does not do is refused clearly ------------------------------------


@pytest.fixture(params=stories.DIALECTS)
def limited(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each dialect as one that declares no capability beyond reading its view."""
    from condense_cli.dialects import dialect_named

    dialect = str(request.param)
    chosen = type(dialect_named(dialect))
    read = chosen.replay_file

    def replay_file(self, source, **kwargs):  # type: ignore[no-untyped-def]
        replay = read(self, source, **kwargs)
        flags = dict.fromkeys(("converts_messages", "audits", "simulates", "appends"), False)
        replay.__class__ = type("Limited", (type(replay),), flags)
        return replay

    monkeypatch.setattr(chosen, "replay_file", replay_file)
    return dialect


@pytest.mark.parametrize(
    ("command", "doing"),
    [
        (("view", "--format", "messages"), "showing the view as chat messages"),
        (("audit",), "auditing condensations"),
        (("simulate", "--type", "amortized_forgetting"), "simulating a condenser over the history"),
        (("run", "--type", "amortized_forgetting", "--set", "max_size=4"), "appending"),
        (("request",), "appending"),
    ],
)
def test_a_command_a_dialect_cannot_do_is_refused_not_a_bug(
    limited: str, command: tuple[str, ...], doing: str, tmp_path: Path, cli
) -> None:
    log = stories.write(limited, tmp_path / "story.jsonl")
    before = log.read_bytes()
    result = cli(*command[:1], log, *command[1:], "--dialect", limited)
    assert result.exit_code == 2, result.output
    assert f"{doing} is not supported for {limited} logs" in result.stderr
    assert "bug" not in result.stderr and "Traceback" not in result.stderr
    assert log.read_bytes() == before


def test_check_and_stats_leave_out_what_a_dialect_cannot_do(
    limited: str, tmp_path: Path, cli
) -> None:
    log = stories.write(limited, tmp_path / "story.jsonl")
    assert cli("check", log, "--dialect", limited).exit_code == 0
    stats = cli("stats", log, "--format", "json", "--no-tokens", "--dialect", limited)
    assert stats.exit_code == 0, stats.output
    assert "messages" not in orjson.loads(stats.stdout)


@EVERY
def test_the_default_stats_agrees_with_the_dialects_own_on_the_view(
    dialect: str, tmp_path: Path
) -> None:
    """A new dialect may leave `stats` to `Replay`'s default, built from its history
    (or view): on every story it gives what each dialect's own walk gives of the view
    and its condensations."""
    from condense_cli.dialects import read_log
    from condense_cli.dialects.base import Replay

    log = str(stories.write(dialect, tmp_path / "story.jsonl"))
    with read_log(log) as replay:
        own = replay.stats(None).to_json()
    with read_log(log) as replay:
        default = Replay.stats(replay, None).to_json()
    for key in ("dialect", "log", "model", "view", "unhandled_request"):
        assert default[key] == own[key], key
    assert default["chars"]["view"] == own["chars"]["view"]
    assert [c["id"] for c in default["condensations"]] == [c["id"] for c in own["condensations"]]
    assert default["bytes"] == (tmp_path / "story.jsonl").stat().st_size
