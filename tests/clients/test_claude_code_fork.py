"""A Claude Code session forked on resume (`--resume ID --fork-session`): the client
copies the conversation into a new session file (its hooks see `SessionStart` with
the source `fork`) and goes on there; the parent is left as it was."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import claude_session_id, claude_sessions, new_claude_session
from tests.clients.servers import AnthropicServer
from tests.clients.test_claude_code import assert_client_sends_the_view, resume

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code client",
)


def test_a_forked_session_replays_as_the_client_sends_it(
    clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    made = tmp_path / "made"
    with AnthropicServer() as server:
        server.reply("Noted.", "Answer two.")
        parent = new_claude_session(
            clients.claude, made, server, ["Keep the API stable.", "Second question"]
        )
    with AnthropicServer() as server:
        server.reply("Forked answer.")
        run = resume(
            clients,
            parent,
            tmp_path / "fork",
            server,
            prompt="Third question",
            extra=("--fork-session",),
        )
        [sent] = server.model_requests()
    assert run.session.read_bytes() == parent.read_bytes()  # the parent is left as it was
    [fork] = [s for s in claude_sessions(tmp_path / "fork") if s != run.session]
    assert claude_session_id(fork) != claude_session_id(parent)
    checked = proc("check", fork)
    assert checked.returncode == 0 and b"differs" not in checked.stdout, checked.stdout
    view = proc("view", fork).stdout.decode()
    for said in ("Keep the API stable.", "Second question", "Third question", "Forked answer."):
        assert said in view
    assert "Keep the API stable." in str(sent["messages"])
    assert_client_sends_the_view(proc, clients, fork, tmp_path / "resumed")
