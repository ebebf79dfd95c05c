"""Inside the agent, without a client: what the hooks say, the forgotten events'
index, the MCP server over stdio, and finding the session a client runs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import anyio
import pytest

from condense_cli.agent.briefing import keep, left_out
from condense_cli.agent.mcp_server import MAX_ANSWER, bounded
from condense_cli.agent.memory import Memory
from condense_cli.agent.sessions import claude_project, find_session
from condense_cli.core.errors import ConfigError
from condense_cli.dialects import read_log
from tests.conftest import CONDENSE, lines_of, msg, require_corpus
from tests.dialects.claude_code.test_replay import POSTHOG


def test_the_forgotten_events_are_indexed_and_read_back_exactly() -> None:
    require_corpus(POSTHOG.parent)
    with read_log(str(POSTHOG)) as replay:
        memory = Memory(replay)
        # 295 forgotten, but one ("Updated task #2 status") is in the view word for word
        assert (len(memory.events), replay.forgotten_events) == (294, 295)
    hits = memory.search("scipy pagerank", 5)
    assert hits and "[scipy]" in hits[0][1]  # the match is marked in the snippet
    assert all("scipy" in e.text.lower() or "pagerank" in e.text.lower() for e, _ in hits)
    first, _ = hits[0]
    assert memory.get(first.number) == memory.get(f"#{first.number}") == memory.get(first.id)
    assert memory.get("999999") is None and memory.search("!!!", 5) == []


def test_answers_are_bounded_and_say_how_to_read_on() -> None:
    text = "x" * (MAX_ANSWER + 10)
    first = bounded(text)
    assert first.startswith("x" * MAX_ANSWER)
    assert first.endswith(
        f"[cut by condense: 10 more characters; read on with offset={MAX_ANSWER}]"
    )
    assert bounded(text, MAX_ANSWER) == "x" * 10


def test_the_mcp_server_answers_over_stdio() -> None:
    require_corpus(POSTHOG.parent)
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def ask() -> dict[str, str]:
        params = StdioServerParameters(command=str(CONDENSE), args=["mcp", "--log", str(POSTHOG)])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = sorted(t.name for t in (await session.list_tools()).tools)
            answers = {"tools": " ".join(tools)}
            for name, arguments in (
                ("search_forgotten", {"query": "scipy"}),
                ("read_forgotten", {"event": "3"}),
                ("read_forgotten", {"event": "nope"}),
                ("list_compactions", {}),
                ("list_pins", {}),
            ):
                result = await session.call_tool(name, arguments)
                answers[f"{name} {arguments}"] = result.content[0].text  # type: ignore[union-attr]
            return answers

    answers = anyio.run(ask)
    assert answers["tools"] == "list_compactions list_pins read_forgotten search_forgotten"
    assert "No module named '[scipy]'" in answers["search_forgotten {'query': 'scipy'}"]
    assert answers["read_forgotten {'event': '3'}"] == (
        "#3 (id 7, call to Read, 63 characters)\n"
        '{"file_path":"/Users/linhungfan/personal_project/weave/doc.md"}'
    )
    assert answers["read_forgotten {'event': 'nope'}"].startswith("no forgotten event 'nope'")
    assert "line 831: forgot 295 events" in answers["list_compactions {}"]
    assert answers["list_pins {}"] == "no pins"


def test_the_session_of_a_folder_is_the_newest_of_its_client(tmp_path: Path) -> None:
    cwd, home = tmp_path / "my.proj_x", tmp_path / "home"
    folder = claude_project(cwd, home)
    assert folder.name == str(cwd).replace("/", "-").replace(".", "-").replace("_", "-")
    with pytest.raises(ConfigError, match="no Claude Code session of"):
        find_session("claude-code", cwd, home)
    folder.mkdir(parents=True)
    old, new = folder / "a.jsonl", folder / "b.jsonl"
    old.write_text("{}\n")
    new.write_text("{}\n")
    os.utime(old, (time.time() - 60, time.time() - 60))
    assert find_session("claude-code", cwd, home) == new
    # Codex: by the session_meta's cwd, or the last turn_context's (resumed elsewhere)
    day = home / ".codex" / "sessions" / "2026" / "11" / "25"
    day.mkdir(parents=True)
    meta = {"type": "session_meta", "payload": {"cwd": "/elsewhere"}}
    turn = {"type": "turn_context", "payload": {"cwd": str(cwd)}}
    rollout = day / "rollout-x.jsonl"
    rollout.write_text(json.dumps(meta) + "\n")
    with pytest.raises(ConfigError, match="no Codex rollout of"):
        find_session("codex", cwd, home)
    rollout.write_text(json.dumps(meta) + "\n" + json.dumps(turn, separators=(",", ":")) + "\n")
    assert find_session("codex", cwd, home) == rollout


def test_what_must_survive_and_what_a_summary_left_out(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    events = [msg(0, "Fix the parser. Do not modify the tests."), msg(1, "done", source="agent")]
    log.write_bytes(lines_of(events))
    with read_log(str(log)) as replay:
        briefing = keep(replay)
        text = briefing.text("HEAD")
        assert text.splitlines()[:3] == [
            "HEAD",
            "Constraints the user set:",
            "- Do not modify the tests.",
        ]
        assert "- Fix the parser." in text
        lost = left_out(replay, "The parser is fixed.")
        assert [f.text for f in lost.facts["constraints"]] == ["Do not modify the tests."]
        assert not left_out(replay, "Fixed the parser; the tests must not be modified.")


def test_the_hooks_answer_in_the_clients_protocol(tmp_path: Path, proc) -> None:
    require_corpus(POSTHOG.parent)
    before = POSTHOG.read_bytes()
    said = json.dumps({"transcript_path": str(POSTHOG), "trigger": "manual"}).encode()
    pre = proc("hook", "pre-compact", input=said)
    assert pre.returncode == 0 and pre.stdout.startswith(b"condense, which reads this session")
    assert b"Files the agent changed:\n- /Users/linhungfan" in pre.stdout
    auto = json.dumps({"transcript_path": str(POSTHOG), "trigger": "auto"}).encode()
    guarded = proc("hook", "pre-compact", "--guard", input=auto)
    assert guarded.returncode == 2 and b"too early" in guarded.stderr  # 89,840 of 177,000
    start = json.dumps({"transcript_path": str(POSTHOG), "source": "compact"}).encode()
    context = json.loads(proc("hook", "post-compact", input=start).stdout)
    assert context["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "these facts still hold" in context["hookSpecificOutput"]["additionalContext"]
    post = json.dumps({"transcript_path": str(POSTHOG), "compact_summary": "S"}).encode()
    told = proc("hook", "post-compact", input=post)
    assert told.stdout.startswith(b"condense: the new summary left out these facts")
    assert POSTHOG.read_bytes() == before
