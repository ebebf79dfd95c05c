"""The sessions Claude Code writes today, made fresh by the pinned client in each run.

Each session here is written by the real `claude` against the scripted Messages
server (tool calls run for real: `Bash`), then proved the way
`test_claude_code` proves the corpus: resumed, the client sends condense's view,
and `view --format messages` is what it sends, its resume repairs included.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import killed_claude_session, new_claude_session
from tests.clients.servers import AnthropicServer
from tests.clients.test_claude_code import (
    _llm_config,
    assert_client_sends_the_view,
    condense_messages,
    condense_view,
    no_config,
)
from tests.fake_llm import FakeLLM

__all__ = ["no_config"]  # a fixture used here

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code client",
)


def bash(call_id: str, command: str) -> dict[str, Any]:
    """A scripted answer: the model calls Bash."""
    return {
        "type": "tool_use",
        "id": call_id,
        "name": "Bash",
        "input": {"command": command, "description": "run it"},
    }


def copy(session: Path, tmp: Path) -> Path:
    target = tmp / session.name
    shutil.copyfile(session, target)
    return target


@pytest.fixture(scope="module")
def compacted(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two turns (one runs `echo`), `/compact`, and a turn after it."""
    tmp = tmp_path_factory.mktemp("compacted")
    with AnthropicServer() as server:
        server.reply(
            bash("toolu_echo", "echo the build is green"),
            "Fixed; the API is unchanged.",
            "Added a test.",
            "<summary>The parser is fixed, the API kept stable, a test added.</summary>",
            "Ran it again.",
        )
        prompts = [
            "Fix the parser and keep the API stable.",
            "Now add a test.",
            "/compact",
            "Run it again.",
        ]
        return new_claude_session(clients.claude, tmp, server, prompts)


@pytest.fixture(scope="module")
def interrupted(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three turns, then a fourth killed while its Bash call ran."""
    tmp = tmp_path_factory.mktemp("interrupted")
    with AnthropicServer() as server:
        server.reply(
            bash("toolu_echo", "echo started"),
            "Started.",
            "Configured.",
            "Deployed.",
            bash("toolu_wait", "python3 -c 'import time; time.sleep(60)'"),
        )
        prompts = ["Start the server.", "Configure it.", "Deploy it."]
        session = new_claude_session(clients.claude, tmp, server, prompts)
        return killed_claude_session(
            clients.claude, tmp, server, "Wait for it.", "toolu_wait", resume=session
        )


def test_a_fresh_session_with_a_compaction_is_what_the_client_sends(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(compacted, tmp_path)
    view = condense_view(proc, session)
    assert view[0].is_summary and "API kept stable" in view[0].text
    assert [e.text for e in view[1:]][-2:] == ["Run it again.", "Ran it again."]
    assert proc("check", "--strict", session).returncode == 0
    assert_client_sends_the_view(proc, clients, session, tmp_path / "client")


def test_an_interrupted_call_is_repaired_as_the_client_repairs_it(
    interrupted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(interrupted, tmp_path)
    messages = condense_messages(proc, session)
    assert messages[-2]["role"] == "tool" and "[Tool call interrupted" in messages[-2]["content"]
    assert messages[-1] == {"role": "assistant", "content": "No response requested."}
    checked = proc("check", session)
    assert checked.returncode == 0
    assert b"answers it as interrupted when the session resumes" in checked.stdout
    assert proc("check", "--strict", session).returncode == 1
    # the client sends the repaired view, and what it wrote checks clean
    resumed = assert_client_sends_the_view(proc, clients, session, tmp_path / "client")
    assert proc("check", "--strict", resumed).returncode == 0


def test_the_client_follows_a_condensation_of_an_interrupted_session(
    interrupted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(interrupted, tmp_path)
    fake = FakeLLM().text("SUMMARY: the user waits for the server.")
    try:
        config = _llm_config(tmp_path, fake)
        done = proc("run", session, "-c", config, "-t", "llm", "-s", "condenser.max_size=6")
    finally:
        fake.close()
    assert done.returncode == 0, done.stderr
    assert_client_sends_the_view(proc, clients, session, tmp_path / "client")
