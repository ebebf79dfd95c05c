"""`condense cost`: each call once, priced by LiteLLM's table as the litellm installed
here ships it; by session, day, month or model; text, JSON and CSV."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from condense_cli.analysis.cost import price_of, spend_by
from condense_cli.core.usage import Usage
from condense_cli.dialects import read_log
from tests import stories
from tests.conftest import CORPUS, require_corpus
from tests.dialects.claude_code.test_replay import Builder

OPUS = price_of("claude-opus-4-7")


def usage(**counts: int) -> dict[str, Any]:
    return {"input_tokens": 0, "output_tokens": 0, **{k: v for k, v in counts.items()}}


def session(tmp_path: Path) -> Path:
    """Three calls of claude-opus-4-7 on two days: one streamed as two lines (the same
    message and request), one with a one-hour cache write; a reply the client wrote
    itself, and a copy `condense run` wrote, which are no calls."""
    b = Builder("claude-opus-4-7")
    b.user("Fix the parser.", timestamp="2026-04-26T10:00:00Z")
    for block in ("thinking", "text"):  # one answer, two lines
        b.assistant([{"type": "text", "text": block}], "m1")
        b.lines[-1] |= {"requestId": "r1", "timestamp": "2026-04-26T10:00:01Z"}
        b.lines[-1]["message"]["usage"] = usage(input_tokens=100, output_tokens=50)
    b.say("Done.", "m2")
    hour = {"ephemeral_1h_input_tokens": 1_000, "ephemeral_5m_input_tokens": 2_000}
    b.lines[-1] |= {"requestId": "r2", "timestamp": "2026-04-27T09:00:00Z"}
    b.lines[-1]["message"]["usage"] = usage(
        cache_creation_input_tokens=3_000, cache_creation=hour, cache_read_input_tokens=10_000
    )
    b.say("No response requested.", "m3")
    b.lines[-1]["message"] |= {"model": "<synthetic>", "usage": usage(input_tokens=9)}
    b.say("Done.", "m4")  # a copy condense wrote
    b.lines[-1] |= {"condenseCopyOf": "u3", "timestamp": "2026-04-27T09:00:05Z"}
    b.lines[-1]["message"]["usage"] = usage(input_tokens=7_777)
    return b.write(tmp_path / "s.jsonl")


def test_each_call_is_counted_once_and_priced_by_its_parts(tmp_path: Path) -> None:
    assert OPUS is not None
    with read_log(str(session(tmp_path))) as replay:
        calls = [("s", u) for u in replay.usage() or []]
    assert [
        (u.input, u.output, u.cache_write, u.cache_write_1h, u.cache_read) for _, u in calls
    ] == [
        (100, 50, 0, 0, 0),
        (0, 0, 2_000, 1_000, 10_000),
    ]
    days = spend_by("day", calls)
    assert list(days) == ["2026-04-26", "2026-04-27"]
    assert days["2026-04-26"].dollars == pytest.approx(100 * OPUS.input + 50 * OPUS.output)
    # the one-hour writes at their own rate, which is not the five-minute one
    assert OPUS.cache_write_1h > OPUS.cache_write
    second = 2_000 * OPUS.cache_write + 1_000 * OPUS.cache_write_1h + 10_000 * OPUS.cache_read
    assert days["2026-04-27"].dollars == pytest.approx(second)
    assert list(spend_by("month", calls)) == ["2026-04"]
    assert spend_by("day", calls, since="2026-04-27").keys() == {"2026-04-27"}
    assert spend_by("day", calls, until="2026-04-26").keys() == {"2026-04-26"}


def test_the_calls_read_from_the_file_are_the_calls_of_the_replay(tmp_path: Path) -> None:
    """`cost` reads a session's calls from its lines, a block at a time, without
    replaying it: the same calls, at the same lines, as the replayed session gives."""
    from condense_cli.dialects import read_usage

    logs = [session(tmp_path)]
    if (CORPUS.parent / "claude-code").is_dir():
        logs += sorted((CORPUS.parent / "claude-code").glob("*.jsonl"))
    for log in logs:
        with read_log(str(log)) as replay:
            replayed = replay.usage()
        assert read_usage(str(log)) == ("claude-code", replayed), log
    crlf = tmp_path / "crlf.jsonl"  # the lines counted through other line ends too
    crlf.write_bytes(logs[0].read_bytes().replace(b"\n", b"\r\n"))
    lines = [[u.line for u in read_usage(str(log))[1] or []] for log in (crlf, logs[0])]
    assert lines[0] == lines[1] and lines[0]


def test_a_billing_block_lasts_five_hours_from_its_first_calls_hour() -> None:
    from condense_cli.analysis.cost import blocks

    def call(when: str) -> Usage:
        return Usage(when, "claude-opus-4-7", input=1)

    stamps = [
        "2026-04-26T21:40:00Z",  # a block from 21:00
        "2026-04-27T01:59:00Z",  # still in it (before 02:00)
        "2026-04-27T02:10:00Z",  # five hours after its start: a block from 02:00
        "2026-04-27T09:30:00Z",  # over five hours after the call before: from 09:00
        "",
    ]
    assert blocks(call(s) for s in stamps) == [
        "2026-04-26T21:00Z",
        "2026-04-26T21:00Z",
        "2026-04-27T02:00Z",
        "2026-04-27T09:00Z",
        "(no date)",
    ]
    calls = [("s", call(s)) for s in stamps[:3]]
    assert list(spend_by("week", calls)) == ["2026-04-20", "2026-04-27"]  # from Mondays


def test_a_prompt_past_the_long_context_tier_is_priced_at_its_rates() -> None:
    price = price_of("gemini-2.5-pro")  # its table entry has a tier above 200k
    assert price is not None and price.tier is not None and price.above == 200_000
    short = Usage("", "gemini-2.5-pro", input=200_000, output=10)
    long = Usage("", "gemini-2.5-pro", input=200_001, output=10)
    assert price.of(short) == pytest.approx(200_000 * price.input + 10 * price.output)
    assert price.of(long) == pytest.approx(200_001 * price.tier.input + 10 * price.tier.output)


@pytest.mark.parametrize(
    "name",
    [
        "claude-opus-4-7",
        "claude-opus-4-7[1m]",
        "anthropic/claude-opus-4-7",
        "claude-opus-4-7-20260416",
    ],
)
def test_a_model_is_priced_by_the_name_it_is_known_by(name: str) -> None:
    assert price_of(name) == OPUS


def test_a_call_a_forked_session_holds_too_is_counted_once(tmp_path: Path, cli) -> None:
    """A fork (`--fork-session`) starts with a copy of the conversation: the same
    message and request ids, no new calls (ccusage counts them once too)."""
    log = session(tmp_path)
    fork = tmp_path / "fork" / "f.jsonl"
    fork.parent.mkdir()
    fork.write_bytes(log.read_bytes())
    data = orjson.loads(cli("cost", tmp_path, "--by", "session", "-f", "json").stdout_bytes)
    assert [(Path(r["session"]).name, r["calls"]) for r in data["rows"]] == [("f.jsonl", 2)]


def test_a_model_without_a_price_is_counted_in_tokens_and_named(tmp_path: Path, cli) -> None:
    b = Builder("claude-nova-9")
    b.user("Hi.")
    b.say("Hello.", "m1")
    log = b.write(tmp_path / "s.jsonl")
    assert price_of("claude-nova-9") is None
    data = orjson.loads(cli("cost", log, "-f", "json").stdout_bytes)
    assert data["totals"]["tokens"] == 100 and data["totals"]["dollars"] == 0
    assert data["totals"]["unpriced_models"] == ["claude-nova-9"]
    text = cli("cost", log).stdout
    assert "+? no price in LiteLLM's table for claude-nova-9" in text


def test_the_corpus_sessions_cost_what_ccusage_says(cli) -> None:
    """ccusage 20.0.24 --offline gave these totals for the corpus sessions (the client
    tests run it again: `tests/clients/test_ccusage.py`)."""
    require_corpus(CORPUS.parent / "codex")
    folders = [CORPUS.parent / "claude-code", CORPUS.parent / "codex"]
    data = orjson.loads(cli("cost", *folders, "--by", "session", "-f", "json").stdout_bytes)
    dollars = {Path(r["session"]).name: r["dollars"] for r in data["rows"]}
    assert dollars == pytest.approx(
        {
            "FundWise.claude-session.jsonl": 5.942159,
            "posthog-impact-dashboard.claude-session.jsonl": 13.511958,
            "FundWise.codex-session.jsonl": 0.300484,
            "edgerunner.codex-session.jsonl": 24.836138,
        },
        abs=1e-6,
    )
    by_model = orjson.loads(cli("cost", *folders, "--by", "model", "-f", "json").stdout_bytes)
    assert [r["model"] for r in by_model["rows"]] == [
        "claude-opus-4-7",
        "gpt-5.5",
        "gpt-5.6-luna",
        "gpt-5.6-sol",
    ]
    projects = orjson.loads(cli("cost", *folders, "--by", "project", "-f", "json").stdout_bytes)
    # the folder each session worked in, as its lines record it: FundWise's Claude Code
    # session (71 calls) and Codex rollout (4) are one project
    assert {r["project"]: r["calls"] for r in projects["rows"]} == {
        "/Users/akash/Desktop/new": 173,
        "/Users/sarthiborkar/Build/FundWise": 75,
        "/Users/linhungfan": 184,
    }
    csv = cli("cost", *folders, "--by", "month", "-f", "csv").stdout.splitlines()
    assert csv[0] == "month,calls,input,output,cache_write,cache_read,tokens,dollars"


def test_cost_reads_the_clients_folders_when_no_log_is_named(tmp_path: Path, proc) -> None:
    projects = tmp_path / ".claude" / "projects" / "-work"
    projects.mkdir(parents=True)
    session(projects)
    done = proc(
        "cost",
        "--by",
        "session",
        "-f",
        "json",
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["rows"]
    assert row["calls"] == 2 and row["session"].endswith("s.jsonl")
    empty = proc("cost", env={"HOME": str(tmp_path / "none"), "PATH": "/usr/bin:/bin"})
    assert empty.returncode == 2 and b"no sessions in the clients' folders" in empty.stderr
    assert proc("cost", projects, "--since", "26-04-2026").returncode == 2


@pytest.mark.parametrize("dialect", ["claude-code", "codex"])
def test_blocks_msgspec_cannot_take_are_read_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    """`cost` decodes a Claude Code block of whole lines at once; a block with a blank
    line (which would move the numbers) or two values on a line is read line by line
    instead. A Codex rollout is read a line at a time by its head, blank lines
    counted. Either way the calls and their lines are the replay's (a Codex replay
    takes them as it reads)."""
    from condense_cli.core import logfile
    from condense_cli.dialects import read_usage

    if dialect == "claude-code":
        logs = [session(tmp_path), *sorted((CORPUS.parent / "claude-code").glob("*.jsonl"))]
    else:
        require_corpus(CORPUS.parent / "codex")
        logs = sorted((CORPUS.parent / "codex").glob("*.jsonl"))
    monkeypatch.setattr(logfile, "BLOCK", 4096)  # many blocks, some of each kind
    for log in logs:
        lines = log.read_bytes().split(b"\n")
        lines.insert(len(lines) // 3, b"")  # a blank line a third of the way
        lines.insert(2 * len(lines) // 3, b"   ")  # and one of spaces further on
        changed = tmp_path / f"blank-{log.name}"
        changed.write_bytes(b"\n".join(lines))
        for each in (log, changed):
            with read_log(str(each)) as replay:
                replayed = replay.usage()
            assert replayed, each
            assert read_usage(str(each)) == (dialect, replayed), each
        numbers = [u.line for u in read_usage(str(changed))[1] or []]
        assert numbers != [u.line for u in read_usage(str(log))[1] or []]  # they moved


def _reshaped(line: bytes, number: int) -> bytes:
    """A rollout's line as Codex does not write it, every fifth in another way: its
    keys in another order, spaces after the separators, its types written with
    escapes, a token count moved under a response item, a payload that is no object."""
    data = orjson.loads(line)
    payload = data.get("payload")
    shape = number % 5
    if shape == 0:
        return orjson.dumps(dict(reversed(data.items())))
    if shape == 1:
        return json.dumps(data).encode()
    if shape == 2:
        kinds = [data["type"], payload.get("type") if isinstance(payload, dict) else None]
        text = orjson.dumps(data)
        for kind in filter(None, kinds):
            escaped = kind.replace("_", "\\u005f").replace("t", "\\u0074", 1)
            text = text.replace(f'"type":"{kind}"'.encode(), f'"type":"{escaped}"'.encode(), 1)
        return text
    if shape == 3 and data["type"] == "event_msg":
        return orjson.dumps(data | {"type": "response_item"})
    if shape == 4 and data["type"] in ("turn_context", "event_msg", "compacted"):
        return orjson.dumps(data | {"payload": "none"})
    return line


def test_a_rollouts_calls_are_the_replays_whatever_shape_its_lines_have(
    tmp_path: Path,
) -> None:
    """`cost` reads a Codex line by its head, where Codex writes its types, and parses
    only the lines that can say something of the calls: on lines Codex does not write
    (keys in another order, spaces, escapes, types the replay refuses) the calls and
    their lines are still the replay's, and a line reshaped without changing its
    meaning keeps its call."""
    from condense_cli.dialects import read_usage

    require_corpus(CORPUS.parent / "codex")
    for log in sorted((CORPUS.parent / "codex").glob("*.jsonl")):
        lines = log.read_bytes().rstrip(b"\n").split(b"\n")
        reshaped = [lines[0], *(_reshaped(raw, n) for n, raw in enumerate(lines[1:], 2))]
        same_meaning = [
            lines[0],
            *(_reshaped(raw, n) if n % 5 < 3 else raw for n, raw in enumerate(lines[1:], 2)),
        ]
        for name, written in (("reshaped", reshaped), ("same", same_meaning)):
            changed = tmp_path / f"{name}-{log.name}"
            changed.write_bytes(b"\r\n".join(written) + b"\r\n")
            with read_log(str(changed), collect=True) as replay:  # (past lines it refuses)
                replayed = replay.usage()
            assert read_usage(str(changed)) == ("codex", replayed), changed
        with read_log(str(log)) as replay:
            assert replay.usage() == read_usage(str(tmp_path / f"same-{log.name}"))[1]
        calls = read_usage(str(tmp_path / f"reshaped-{log.name}"))[1]
        assert calls is not None and len(calls) < len(read_usage(str(log))[1] or [])


def test_a_copy_of_a_codex_rollout_is_the_same_calls(tmp_path: Path, cli) -> None:
    """The same counts at the same moments, in a copy under another session id: the
    same calls (ccusage counts them once too)."""
    require_corpus(CORPUS.parent / "codex")
    original = CORPUS.parent / "codex" / "FundWise.codex-session.jsonl"
    first, rest = original.read_bytes().split(b"\n", 1)
    meta = orjson.loads(first)
    meta["payload"]["id"] = "00000000-0000-4000-8000-000000000000"
    (tmp_path / "copy.jsonl").write_bytes(orjson.dumps(meta) + b"\n" + rest)
    (tmp_path / "original.jsonl").write_bytes(original.read_bytes())
    data = orjson.loads(cli("cost", tmp_path, "--by", "session", "-f", "json").stdout_bytes)
    assert [(Path(r["session"]).name, r["calls"]) for r in data["rows"]] == [("copy.jsonl", 4)]


def test_a_v1_conversation_costs_what_its_sdk_recorded(cli) -> None:
    """An OpenHands V1 conversation's calls are in its `base_state.json`, the agent's
    and its condenser's, each with the dollars the SDK recorded: LiteLLM's table has
    no price for their model today, so those dollars stand."""
    require_corpus(CORPUS.parent / "openhands-v1")
    folders = sorted((CORPUS.parent / "openhands-v1").iterdir())
    recorded = 0.0
    for folder in folders:
        stats = orjson.loads((folder / "event_service" / "base_state.json").read_bytes())["stats"]
        recorded += sum(m["accumulated_cost"] for m in stats["service_to_metrics"].values())
    data = orjson.loads(cli("cost", *folders, "-f", "json").stdout_bytes)
    totals = data["totals"]
    assert totals["dollars"] == pytest.approx(recorded, abs=1e-4)
    assert totals["calls"] == totals["priced_as_the_log_records"] == 1208
    assert "* 1,208 calls priced at the dollars their log records" in cli("cost", *folders).stdout


@pytest.mark.parametrize("dialect", [d for d in stories.DIALECTS if d != "openhands-v1"])
def test_a_session_its_client_is_writing_is_read_to_its_last_whole_line(
    dialect: str, tmp_path: Path, cli
) -> None:
    """`cost` reads the clients' own folders, where a session may be half written."""
    log = stories.write(dialect, tmp_path / "s.jsonl")
    whole = cli("cost", log, "-f", "json", "--no-cache")
    with log.open("ab") as out:
        out.write(b'{"type": "assistant", "message": {"id": "half')
    half = cli("cost", log, "-f", "json", "--no-cache")
    assert half.exit_code == whole.exit_code == 0, half.output
    assert half.stdout == whole.stdout


def test_a_session_that_records_no_call_is_said_not_left_out_silently(proc) -> None:
    """A V1 conversation whose state records no call beside a Codex rollout: the table
    is the rollout's, and a line says the other session was read and had none."""
    conversation = CORPUS.parent / "openhands-v1" / "ef56c89a61cd4e7392e60bd1ac69b83d"
    rollout = CORPUS.parent / "codex" / "FundWise.codex-session.jsonl"
    require_corpus(conversation)
    done = proc("cost", conversation, rollout, "--by", "project", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert "/Users/sarthiborkar/Build/FundWise" in done.stdout.decode()
    assert done.stderr.decode() == "1 of the 2 logs read records no model call\n"


def test_a_cost_with_no_call_to_show_says_why(proc) -> None:
    """No table when there is no call to show, and the line under it says which of the
    two it is: the sessions read record none (the conversation's model was called, but
    its state holds no metrics), or the calls fall outside the days asked for. Said in
    JSON too, where the rows are empty."""
    conversation = CORPUS.parent / "openhands-v1" / "47be65612b9246c8991628ac9af4996a"
    other = CORPUS.parent / "openhands-v1" / "ef56c89a61cd4e7392e60bd1ac69b83d"
    rollout = CORPUS.parent / "codex" / "FundWise.codex-session.jsonl"
    require_corpus(conversation)
    for format in ("text", "json"):
        done = proc("cost", conversation, "-f", format, "--no-cache")
        assert done.returncode == 0, done.stderr
        assert done.stderr.decode() == "the log read records no model call\n"
        assert (done.stdout == b"") is (format == "text"), done.stdout
    both = proc("cost", conversation, other, "--no-cache")
    assert both.stdout == b""
    assert both.stderr.decode() == "none of the 2 logs read records a model call\n"
    late = proc("cost", rollout, conversation, "--since", "2027-01-01", "--no-cache")
    assert late.returncode == 0 and late.stdout == b""
    assert late.stderr.decode().splitlines() == [
        "1 of the 2 logs read records no model call",
        "none of the 4 calls read falls in the days asked for",
    ]


def streamed(tmp_path: Path) -> Path:
    """A session as Claude Code wrote them in early 2026: an answer's lines hold its
    usage as it streamed (the output so far; the last line the whole of it), and one
    answer came through a gateway that sends no request id."""
    b = Builder("claude-opus-4-7")
    b.user("Fix the parser.", timestamp="2026-03-11T02:40:20Z")
    for number, output in enumerate((2, 9, 159)):
        kind = "thinking" if number == 0 else "text" if number == 1 else "tool_use"
        block: dict[str, Any] = {"type": "text", "text": kind}
        b.assistant([block], "m1")
        b.lines[-1] |= {"requestId": "r1", "timestamp": f"2026-03-11T02:40:2{number + 1}Z"}
        b.lines[-1]["message"]["usage"] = usage(
            input_tokens=3, cache_read_input_tokens=22_137, output_tokens=output
        )
    for output in (40, 40):  # no request id: the same answer by its message id alone
        b.assistant([{"type": "text", "text": "Done."}], "m2")
        b.lines[-1] |= {"timestamp": "2026-03-11T02:41:00Z"}
        b.lines[-1]["message"]["usage"] = usage(input_tokens=5, output_tokens=output)
    return b.write(tmp_path / "streamed.jsonl")


def test_a_streamed_answer_is_one_call_with_its_whole_output(tmp_path: Path) -> None:
    """Each answer is one call, at its line with the most tokens (the last snapshot of
    a streamed answer, the first of equals); the replay and the file's read agree."""
    from condense_cli.dialects import read_usage

    log = streamed(tmp_path)
    name, calls = read_usage(str(log))
    with read_log(str(log)) as replay:
        assert (name, replay.usage()) == ("claude-code", calls)
    assert calls is not None
    assert [(c.output, c.line, c.when, c.key) for c in calls] == [
        (159, 5, "2026-03-11T02:40:23Z", "m1:r1"),
        (40, 6, "2026-03-11T02:41:00Z", "m2"),
    ]


def test_a_subagents_transcript_beside_its_session_is_costed_in_it(tmp_path: Path, cli) -> None:
    """The client wrote a subagent's transcript beside its sessions before it kept them
    in a folder of the session's (`agent-<id>.jsonl`, its lines naming the session):
    `--by session` counts its calls in the session they name, where that session's
    file is, and on a row of its own where it is not."""
    from tests.dialects.claude_code.test_replay import SID

    project = tmp_path / "projects" / "-work"
    project.mkdir(parents=True)
    session(project).rename(project / f"{SID}.jsonl")
    agent = Builder("claude-opus-4-7")
    agent.user("Look around.", timestamp="2026-04-26T10:05:00Z")
    agent.say("Nothing here.", "sub1")
    agent.lines[-1] |= {"requestId": "rs", "timestamp": "2026-04-26T10:05:01Z"}
    agent.lines[-1]["message"]["usage"] = usage(input_tokens=50, output_tokens=5)
    agent.lines = [line | {"isSidechain": True} for line in agent.lines[1:]]  # (no queue line)
    agent.write(project / "agent-a1.jsonl")
    data = orjson.loads(cli("cost", project, "--by", "session", "-f", "json").stdout_bytes)
    rows = [(Path(r["session"]).name, r["calls"]) for r in data["rows"]]
    assert rows == [(f"{SID}.jsonl", 3)]  # the session's two calls and the subagent's
    (project / f"{SID}.jsonl").unlink()
    data = orjson.loads(cli("cost", project, "--by", "session", "-f", "json").stdout_bytes)
    assert [(Path(r["session"]).name, r["calls"]) for r in data["rows"]] == [("agent-a1.jsonl", 1)]


def test_a_call_served_fast_or_in_one_geography_costs_the_tables_surcharge(
    tmp_path: Path, cli
) -> None:
    """LiteLLM's table gives a model's surcharges (`provider_specific_entry`); a call
    Claude Code records as served so (`speed`, `inference_geo`) costs them, each on
    every part of the call; `--by model` shows it on a row of its own."""
    from condense_cli.analysis.cost import price_table

    model = "claude-opus-5-5"
    surcharges = price_table()[model]["provider_specific_entry"]
    price = price_of(model)
    assert price is not None and price.surcharges["fast"] == surcharges["fast"] > 1
    call = Usage("2026-11-01T10:00:00Z", model, 1_000, 1_000, 1_000, 0, 1_000)
    served = Usage("2026-11-01T10:00:00Z", model, 1_000, 1_000, 1_000, 0, 1_000, served="fast us")
    assert price.of(served) == pytest.approx(price.of(call) * surcharges["fast"] * surcharges["us"])
    assert price.of(Usage("", model, 1_000, served="global")) == price.of(Usage("", model, 1_000))
    b = Builder(model)
    b.user("Hurry.", timestamp="2026-11-01T10:00:00Z")
    for id, speed, geo in (("m1", "standard", ""), ("m2", "fast", "us"), ("m3", "fast", "US")):
        b.say("Done.", id)
        b.lines[-1] |= {"requestId": f"r{id}", "timestamp": "2026-11-01T10:00:01Z"}
        b.lines[-1]["message"]["usage"] = usage(input_tokens=1_000, output_tokens=1_000) | {
            "speed": speed,
            "inference_geo": geo,
        }
    log = b.write(tmp_path / "fast.jsonl")
    rows = orjson.loads(cli("cost", log, "--by", "model", "-f", "json").stdout_bytes)["rows"]
    standard = price.of(Usage("", model, 1_000, 1_000))
    both = pytest.approx(2 * standard * surcharges["fast"] * surcharges["us"], abs=1e-6)
    assert [(r["model"], r["calls"], r["dollars"]) for r in rows] == [
        (model, 1, pytest.approx(standard, abs=1e-6)),
        (f"{model} (fast mode, us-only inference)", 2, both),
    ]


def test_a_codex_calls_service_tier_is_the_threads_settings_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Codex writes the thread's settings (`thread_settings_applied`, its service tier)
    as they apply: a call is served at the tier of the last settings before it (not
    the default's). The file's read and the replay, on each of its paths, agree."""
    from condense_cli.dialects import read_usage
    from tests.dialects.fast_paths import EXACT, FAST, SPLIT, use_path

    require_corpus(CORPUS.parent / "codex")
    original = CORPUS.parent / "codex" / "edgerunner.codex-session.jsonl"
    lines = original.read_bytes().splitlines()
    settings = [n for n, raw in enumerate(lines) if b'"thread_settings_applied"' in raw]
    assert len(settings) > 2
    first = settings[1]  # from the second settings on, priority; from the third, flex
    for number, tier in ((first, b"priority"), (settings[2], b"flex")):
        lines[number] = lines[number].replace(
            b'"service_tier":"default"', b'"service_tier":"%s"' % tier
        )
    log = tmp_path / "tiers.jsonl"
    log.write_bytes(b"\n".join(lines) + b"\n")
    _, calls = read_usage(str(log))
    assert calls is not None
    served = [(c.line or 0, c.served) for c in calls]
    assert {s for line, s in served if line < first} == {""}
    assert {s for line, s in served if first < line < settings[2]} == {"priority"}
    assert {s for line, s in served if line > settings[2]} <= {"flex", ""}
    assert "flex" in {s for _, s in served}
    for path in (EXACT, FAST, SPLIT):
        use_path(monkeypatch, path, block=4096)
        with read_log(str(log)) as replay:
            assert replay.usage() == calls, path
