"""`condense mcp` on the wire: every line it is sent gets an answer, malformed ones
the protocol's errors, and no argument makes it hang, crash or echo without bound
(issue 55, item 13). Raw JSON-RPC lines over a real subprocess's stdin and stdout."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CONDENSE, CORPUS, require_corpus
from tests.dialects.claude_code.test_replay import POSTHOG


class Wire:
    """A `condense mcp` process, initialised, spoken to a line at a time."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        self.process = subprocess.Popen(
            [str(CONDENSE), "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
        hello["clientInfo"] = {"name": "test", "version": "1"}
        assert "result" in self.ask(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, line: dict[str, Any] | bytes) -> None:
        raw = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(raw + b"\n")
        self.process.stdin.flush()

    def ask(self, line: dict[str, Any] | bytes, timeout: float = 30) -> dict[str, Any]:
        self.send(line)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        assert ready, f"no answer to {line!r:.120} in {timeout} s"
        answer: dict[str, Any] = json.loads(self.process.stdout.readline())
        return answer

    def call(self, call_id: int, tool: str, **arguments: Any) -> str:
        request = {"name": tool, "arguments": arguments}
        answer = self.ask(
            {"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": request}
        )
        assert answer["id"] == call_id, answer
        return str(answer["result"]["content"][0]["text"])

    def close(self) -> bytes:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        return self.process.stderr.read()


@pytest.fixture
def wire() -> Iterator[Wire]:
    require_corpus(POSTHOG.parent)
    served = Wire("--log", str(POSTHOG))
    yield served
    assert b"Traceback" not in served.close()


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (b"{not json", -32700, None),
        (b"[1, 2]", -32600, None),
        (b'{"jsonrpc": "2.0", "id": 5}', -32600, 5),  # no method
        (b'{"jsonrpc": "1.0", "id": 6, "method": "tools/list"}', -32600, 6),
        (b'"just a string"', -32600, None),
    ],
)
def test_a_line_that_is_no_request_gets_the_protocols_error(
    wire: Wire, line: bytes, code: int, request_id: int | None
) -> None:
    answer = wire.ask(line)
    assert answer["error"]["code"] == code and answer["id"] == request_id
    assert wire.call(99, "list_pins") == "no pins"  # and the server goes on


def test_every_tool_call_is_answered_and_bounded(wire: Wire) -> None:
    assert wire.call(1, "read_forgotten", event="²").startswith("no forgotten event #²")
    said = wire.call(2, "read_forgotten", event=7, offset=-1_000_000_000)
    assert said == "offset must be 0 or more (got -1000000000)"
    # a lone surrogate (valid JSON, no UTF-8) was never answered
    surrogate = b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": '
    surrogate += b'{"name": "search_forgotten", "arguments": {"query": "\\ud800 scipy"}}}'
    answer = wire.ask(surrogate)
    assert answer["id"] == 3 and "[scipy]" in answer["result"]["content"][0]["text"]
    started = time.monotonic()
    said = wire.call(4, "search_forgotten", query="word " * 200_000)
    assert time.monotonic() - started < 10  # 200 s before
    assert (
        said
        == "the query is 1,000,000 characters; search with at most 2,000 (the words that matter)"
    )
    missing = wire.call(5, "search_forgotten", query="zzqx " * 300)
    assert missing.startswith("nothing forgotten matches 'zzqx") and len(missing) < 200


def test_a_session_that_is_no_regular_file_is_said_not_read(tmp_path: Path) -> None:
    """A FIFO given as the log hung the server; a link to /etc/shadow among a client's
    sessions gave its first line to the model."""
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    served = Wire("--log", str(fifo))
    assert "is not a session log (not a regular file)" in served.call(1, "list_compactions")
    served.close()
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    project = home / ".claude" / "projects" / str(work).replace("/", "-")
    project.mkdir(parents=True)
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$very-secret-hash:20228:0:99999:7:::\n")
    (project / "linked.jsonl").symlink_to(secret)
    env = dict(os.environ, HOME=str(home))
    served = Wire(env=env, cwd=work)
    said = served.call(1, "list_compactions")
    served.close()
    assert said.startswith("condense: no Claude Code session of") and "very-secret" not in said


def test_search_history_finds_the_projects_other_sessions_and_reads_them_back(
    tmp_path: Path,
) -> None:
    """Inside a session of one Claude Code project: the posthog session, earlier in the
    same project, is searched and read back; another project's is not looked at; a
    Codex rollout that worked in the same folder is the project's too."""
    require_corpus(POSTHOG.parent)
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-work-dashboard"
    other = home / ".claude" / "projects" / "-work-elsewhere"
    project.mkdir(parents=True)
    other.mkdir(parents=True)

    def moved(log: Path, folder: bytes, to: bytes) -> bytes:
        """The session as if the client had run in `to` (each line records its `cwd`)."""
        return log.read_bytes().replace(b'"cwd":"' + folder, b'"cwd":"' + to)

    earlier = project / "earlier.jsonl"
    earlier.write_bytes(moved(POSTHOG, b"/Users/linhungfan", b"/work/dashboard"))
    theirs = moved(POSTHOG, b"/Users/linhungfan", b"/work/elsewhere")
    (other / "theirs.jsonl").write_bytes(theirs)
    current = project / "current.jsonl"
    fundwise = POSTHOG.with_name("FundWise.claude-session.jsonl")
    current.write_bytes(moved(fundwise, b"/Users/sarthiborkar/Build/FundWise", b"/work/dashboard"))
    rollout = home / ".codex" / "sessions" / "2026" / "05" / "04" / "rollout-a.jsonl"
    rollout.parent.mkdir(parents=True)
    codex = CORPUS.parent / "codex" / "FundWise.codex-session.jsonl"
    rollout.write_bytes(
        codex.read_bytes().replace(b"/Users/sarthiborkar/Build/FundWise", b"/work/dashboard")
    )
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    served = Wire("--log", str(current), env=env)
    try:
        found = served.call(1, "search_history", query="CODEOWNERS gh api")
        assert f"{earlier} #455 (agent, call to Bash" in found
        assert "theirs.jsonl" not in found and "current.jsonl" not in found
        read = served.call(2, "read_event", session_path=str(earlier), event="#455")
        assert read.startswith(f"{earlier} #455 (agent, call to Bash)")
        assert "repos/PostHog/posthog/contents/.github/CODEOWNERS" in read
        theirs_read = served.call(
            3, "read_event", session_path=str(other / "theirs.jsonl"), event=455
        )
        assert theirs_read.startswith("no event 455 in a session of this project")
        nothing = served.call(4, "search_history", query="zanzibarian")
        assert nothing == "nothing in the project's 2 other sessions matches 'zanzibarian'"
        assert f"{rollout} #4 (user" in served.call(5, "search_history", query="zerion agent")
    finally:
        assert b"Traceback" not in served.close()


def test_a_codex_rollouts_project_is_the_folder_it_ran_in_not_its_day(tmp_path: Path) -> None:
    """Codex keeps rollouts by day: an earlier rollout of the same working folder, on
    another day, is the project's; a rollout of another folder on the same day is not."""
    rollout = CORPUS.parent / "codex" / "FundWise.codex-session.jsonl"
    require_corpus(rollout.parent)
    home = tmp_path / "home"
    sessions = home / ".codex" / "sessions" / "2026"
    folder = b"/Users/sarthiborkar/Build/FundWise"
    for day, name, cwd in (
        ("05/04", "earlier", folder),
        ("11/28", "current", folder),
        ("11/28", "theirs", b"/elsewhere"),
    ):
        path = sessions / day / f"rollout-{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rollout.read_bytes().replace(folder, cwd))
    earlier = sessions / "05" / "04" / "rollout-earlier.jsonl"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    served = Wire("--log", str(sessions / "11" / "28" / "rollout-current.jsonl"), env=env)
    try:
        found = served.call(1, "search_history", query="zerion agent")
        assert f"{earlier} #4 (user" in found and "theirs" not in found
    finally:
        assert b"Traceback" not in served.close()
