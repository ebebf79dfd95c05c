"""`condense hook` inside the real Claude Code, offline against the scripted server.

The hooks are installed with `condense hook install claude-code` into the HOME the
client runs with. A session whose last response took more context than the
client's threshold is resumed: the client compacts it before anything else, and
the requests it sends show what the hooks did: the summariser's request carries the
pre-compact hook's instructions, the first request after the compaction carries
what the post-compact hook gave back, and with `--guard` a compaction that would
only repeat the last one is not made.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.servers import AnthropicServer
from tests.clients.test_claude_code import resume
from tests.clients.test_claude_code_today import compacted, copy, lines_of, with_context

__all__ = ["compacted"]  # a fixture used here

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code client",
)

CONSTRAINT = "keep the API stable"  # the user said it; the scripted summary drops it


def install(proc: Callable[..., Any], home: Path, *args: str) -> Path:
    """`condense hook install claude-code` into `home`, as a user would."""
    home.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HOME=str(home))
    done = proc("hook", "install", "claude-code", *args, env=env)
    assert done.returncode == 0, done.stderr
    return home / ".claude" / "settings.json"


def is_summary_request(body: dict[str, Any]) -> bool:
    return "<summary>" in json.dumps(body["messages"][-1])


def over_threshold(session: Path, tmp: Path, tokens: int = 979_000) -> Path:
    """The session with its last response over the client's threshold (1M window:
    it compacts from 967,000; from 977,000 the request cannot go out uncompacted,
    and the client compacts even when a hook blocks it)."""
    return with_context(session, tmp, tokens)


def test_the_hooks_keep_what_matters_through_the_clients_own_compaction(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = over_threshold(copy(compacted, tmp_path), tmp_path / "session")
    before = session.read_bytes()
    # the user's settings.json: linked from a dotfiles folder, with another tool's
    # PreCompact hook whose command ends in the same words as condense's
    ran = tmp_path / "theirs-ran"
    theirs = {"type": "command", "command": f"sh -c 'touch {ran}' hook pre-compact"}
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text(json.dumps({"hooks": {"PreCompact": [{"hooks": [theirs]}]}}))
    (tmp_path / "client" / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "client" / "home" / ".claude" / "settings.json").symlink_to(dotfiles)
    settings = install(proc, tmp_path / "client" / "home")
    assert settings.is_symlink()
    hooks = json.loads(settings.read_text())["hooks"]
    assert set(hooks) == {"PreCompact", "SessionStart", "PostCompact"}
    assert hooks["PreCompact"][0]["hooks"] == [theirs]
    with AnthropicServer() as server:
        run = resume(
            clients, session, tmp_path / "client", server.reply("<summary>S</summary>", "ok")
        )
        requests = server.model_requests()
    assert session.read_bytes() == before  # the hooks read the session, never write it
    summarising, after = requests[0], requests[1]
    assert is_summary_request(summarising)
    # before: the summariser was asked to keep the user's constraint
    asked = json.dumps(summarising["messages"][-1], ensure_ascii=False)
    assert "condense, which reads this session's log, asks the summary to keep" in asked
    assert CONSTRAINT in asked
    # after: the summary ("S") lost it; the next request has it given back
    sent = json.dumps(after["messages"], ensure_ascii=False)
    assert "condense read this session's log as it was before the compaction" in sent
    assert CONSTRAINT in sent
    resumed = lines_of(run.session)
    assert sum(x.get("subtype") == "compact_boundary" for x in resumed) == 2
    assert ran.exists()  # the other tool's hook ran beside ours


def test_the_guard_stops_a_compaction_that_would_only_repeat_the_last(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """One answer after the last compaction, the client would compact again: with
    `--guard` the pre-compact hook blocks it and the client goes on uncompacted."""
    session = over_threshold(copy(compacted, tmp_path), tmp_path / "session", 970_000)
    install(proc, tmp_path / "unguarded" / "home")  # without --guard, the client compacts
    with AnthropicServer() as server:
        resume(clients, session, tmp_path / "unguarded", server.reply("<summary>S</summary>", "ok"))
        assert is_summary_request(server.model_requests()[0])
    install(proc, tmp_path / "client" / "home", "--guard")
    with AnthropicServer() as server:
        run = resume(clients, session, tmp_path / "client", server.reply("ok", "ok"))
        requests = server.model_requests()
    assert requests and not any(is_summary_request(r) for r in requests)
    resumed = lines_of(run.session)
    assert sum(x.get("subtype") == "compact_boundary" for x in resumed) == 1


def test_install_keeps_what_is_there_and_uninstall_removes_only_ours(
    proc: Callable[..., Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    theirs = {
        "model": "claude-opus-5-5",
        "hooks": {
            "PreCompact": [{"matcher": "", "hooks": [{"type": "command", "command": "echo hi"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        },
    }
    settings.write_text(json.dumps(theirs))
    env = dict(os.environ, HOME=str(home))
    dry = proc("hook", "install", "claude-code", "--dry-run", env=env)
    assert dry.returncode == 0 and b'+            "command": ' in dry.stdout
    assert json.loads(settings.read_text()) == theirs  # a dry run writes nothing
    install(proc, home)
    install(proc, home)  # twice is once
    merged = json.loads(settings.read_text())
    assert (
        merged["model"] == "claude-opus-5-5" and merged["hooks"]["Stop"] == theirs["hooks"]["Stop"]
    )
    pre = merged["hooks"]["PreCompact"]
    assert pre[0] == theirs["hooks"]["PreCompact"][0] and len(pre) == 2
    assert pre[1]["hooks"][0]["command"].endswith(" hook pre-compact")
    assert merged["hooks"]["SessionStart"][0]["matcher"] == "compact"
    removed = proc("hook", "uninstall", "claude-code", env=env)
    assert removed.returncode == 0, removed.stderr
    assert json.loads(settings.read_text()) == theirs
    settings.write_text("{not json")
    broken = proc("hook", "install", "claude-code", env=env)
    assert broken.returncode == 2 and b"is not valid JSON" in broken.stderr
    assert settings.read_text() == "{not json"


def test_the_hooks_fail_open(proc: Callable[..., Any], tmp_path: Path) -> None:
    for bad in (b"not json", b"{}", b'{"transcript_path": "/nonexistent/session.jsonl"}'):
        for hook in ("pre-compact", "post-compact"):
            done = proc("hook", hook, input=bad)
            assert done.returncode == 0 and done.stdout == b"", (hook, bad)
            assert b"condense: hook" in done.stderr and b"Traceback" not in done.stderr


def test_a_pin_survives_a_compact_the_user_asks_for(
    clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """`/compact` in a session with the hooks installed and a pin: the summariser is
    asked to keep the pin, and the turn after the compaction has it back."""
    from tests.clients.resume import claude_sessions, new_claude_session

    install(proc, tmp_path / "home")
    pin = "deploy only from the main branch"
    with AnthropicServer() as server:
        server.reply("Fixed.")
        session = new_claude_session(clients.claude, tmp_path, server, ["Fix the parser."])
    assert proc("pin", session, pin).returncode == 0  # kept in the session itself
    with AnthropicServer() as server:
        server.reply("<summary>The parser is fixed.</summary>", "Done.")
        new_claude_session(clients.claude, tmp_path, server, ["/compact"], resume=session)
        new_claude_session(clients.claude, tmp_path, server, ["Run it again."], resume=session)
        summarising, after = server.model_requests()
    assert claude_sessions(tmp_path) == [session]
    assert is_summary_request(summarising) and pin in json.dumps(summarising["messages"][-1])
    assert pin in json.dumps(after["messages"], ensure_ascii=False)
