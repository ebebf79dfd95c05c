"""`condense mcp` inside the real clients, offline against their scripted servers.

The server is registered with `condense mcp install`, as a user would. The scripted
model calls its tools; the client runs them through condense's server (stdio) and
sends the results back in its next request, where the forgotten command output must
be, byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from condense_cli.agent.memory import ForgottenIndex
from condense_cli.dialects import read_log
from tests.clients import test_codex_today
from tests.clients.install import Clients
from tests.clients.resume import resume_claude, resume_codex
from tests.clients.servers import AnthropicServer, OpenAIServer
from tests.clients.test_claude_code_today import compacted, copy, lines_of, sent_result
from tests.clients.test_codex import WINDOW

__all__ = ["compacted"]  # a fixture used here


@pytest.fixture(scope="module")
def rollout(clients: Clients, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Codex rollout whose tool call's output Codex's own compaction forgot."""
    return test_codex_today.fresh(clients, tmp_path_factory.mktemp("rollout"), compact=True)


pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the clients",
)

TOOLS = "mcp__condense__search_forgotten,mcp__condense__read_forgotten,mcp__condense__list_pins"
REQUIRED = ("-c", "mcp_servers.condense.required=true")  # waited for before a turn


def use(call_id: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": f"mcp__condense__{tool}", "input": arguments}


def echo_output(session: Path) -> str:
    """What the session's `echo` call printed, as the client recorded it."""
    for line in lines_of(session):
        content = line.get("message", {}).get("content")
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == "toolu_echo":
                    value = block["content"]
                    return value if isinstance(value, str) else value[0]["text"]
    raise AssertionError("no echo output in the session")


def test_claude_code_reads_back_a_forgotten_output_exactly(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = copy(compacted, tmp_path)
    output = echo_output(session)
    with read_log(str(session)) as replay:
        memory = ForgottenIndex(replay)
    [forgotten] = [e for e in memory.events if e.text == output]  # /compact forgot it
    home = tmp_path / "client" / "home"
    home.mkdir(parents=True)
    env = dict(os.environ, HOME=str(home))
    installed = proc("mcp", "install", "claude-code", env=env)
    assert installed.returncode == 0, installed.stderr
    registered = json.loads((home / ".claude.json").read_text())["mcpServers"]["condense"]
    assert registered["args"] == ["mcp", "--client", "claude-code"]
    before = session.read_bytes()
    with AnthropicServer() as server:
        server.reply(
            use("toolu_search", "search_forgotten", {"query": "build green"}),
            use("toolu_read", "read_forgotten", {"event": int(forgotten.id)}),
            "The build was green.",
        )
        run = resume_claude(
            clients.claude,
            session,
            tmp_path / "client",
            server,
            "What did the build say?",
            extra=(f"--allowedTools={TOOLS}",),
        )
        assert run.returncode == 0, run.stderr
        requests = server.model_requests()
    assert session.read_bytes() == before  # the server reads the session, never writes it
    assert len(requests) == 3
    found = json.dumps(sent_result(requests[1], "toolu_search"))
    assert f"#{forgotten.id} (tool output" in found
    read = sent_result(requests[2], "toolu_read")
    text = read if isinstance(read, str) else "".join(b["text"] for b in read)
    assert text == f"{forgotten.heading()}\n{output}"  # the output, byte for byte


def test_install_registers_once_and_uninstall_removes_only_ours(
    proc: Callable[..., Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), CODEX_HOME=str(home / ".codex"))
    state = home / ".claude.json"
    theirs = {"numStartups": 3, "mcpServers": {"other": {"command": "other-server"}}}
    state.write_text(json.dumps(theirs))
    assert proc("mcp", "install", "claude-code", env=env).returncode == 0
    assert proc("mcp", "install", "claude-code", env=env).stderr.endswith(b"nothing to change\n")
    data = json.loads(state.read_text())
    assert data["numStartups"] == 3 and set(data["mcpServers"]) == {"other", "condense"}
    assert proc("mcp", "uninstall", "claude-code", env=env).returncode == 0
    assert json.loads(state.read_text()) == theirs
    # Codex: a table of config.toml, the user's text around it kept as it was
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    mine = '# my settings\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "other"\n'
    config.write_text(mine)
    dry = proc("mcp", "install", "codex", "--dry-run", env=env)
    assert b"+[mcp_servers.condense]" in dry.stdout and config.read_text() == mine
    assert proc("mcp", "install", "codex", env=env).returncode == 0
    text = config.read_text()
    assert text.startswith(mine) and 'args = ["mcp", "--client", "codex"]' in text
    assert proc("mcp", "uninstall", "codex", env=env).returncode == 0
    assert config.read_text() == mine + "\n"


def test_codex_reads_back_a_forgotten_output_exactly(
    rollout: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """Codex calls MCP tools from its `exec` tool's script (`tools.mcp__condense__…`):
    the script prints what `read_forgotten` answered, and the next request has it."""
    rollout = copy(rollout, tmp_path)
    with read_log(str(rollout)) as replay:
        memory = ForgottenIndex(replay)
    [forgotten] = [
        e for e in memory.events if e.kind == "tool output" and "the build is green" in e.text
    ]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = dict(os.environ, HOME=str(scratch), CODEX_HOME=str(scratch))
    assert proc("mcp", "install", "codex", env=env).returncode == 0
    table = (scratch / "config.toml").read_text()  # what `install` wrote, for Codex to read
    script = (
        f"const r = await tools.mcp__condense__read_forgotten({{event: {forgotten.id}}}); "
        "text(r.content[0].text);"
    )
    call = {
        "type": "custom_tool_call",
        "id": "ctc_mcp",
        "status": "completed",
        "call_id": "call_mcp",
        "name": "exec",
        "input": script,
    }
    before = rollout.read_bytes()
    with OpenAIServer() as server:
        server.reply(call, "The build was green.")
        run = resume_codex(
            clients.codex,
            rollout,
            tmp_path / "run",
            server,
            "What did the build say?",
            # Codex 0.169 leaves an optional server that is still starting out of
            # the turn's tools; a required one is waited for, so a slow start on a
            # busy machine cannot make the script find no tool
            extra=(*WINDOW, "--dangerously-bypass-approvals-and-sandbox", *REQUIRED),
            config_extra="\n" + table,
        )
        assert run.returncode == 0, run.stderr
        requests = server.model_requests()
    assert rollout.read_bytes() == before
    assert len(requests) == 2
    [output] = [i for i in requests[1]["input"] if i.get("type") == "custom_tool_call_output"][-1:]
    texts = [part["text"] for part in output["output"]]
    assert f"{forgotten.heading()}\n{forgotten.text}" in texts  # byte for byte


def test_claude_code_searches_the_projects_earlier_session(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """An earlier session of the same project (the corpus' posthog session, in the
    client's project folder): the model's `search_history` finds its forgotten gh
    call, and `read_event` reads it back; the client sends both results on."""
    from condense_cli.dialects.claude_code.detect import project_of
    from tests.clients.resume import claude_project_dir
    from tests.dialects.claude_code.test_replay import POSTHOG

    session = copy(compacted, tmp_path)
    home = tmp_path / "client" / "home"
    folder = home / ".claude" / "projects" / claude_project_dir(tmp_path / "client" / "work")
    folder.mkdir(parents=True)
    # both sessions as if the client had run them in the project's folder (each line
    # records where it ran; the fixture's session ran in a folder of its own)
    work = b'"cwd":"' + str(tmp_path / "client" / "work").encode()
    ran = b'"cwd":"' + (project_of(str(session)) or "").encode()
    session.write_bytes(session.read_bytes().replace(ran + b'"', work + b'"'))
    earlier = folder / "earlier-session.jsonl"
    earlier.write_bytes(POSTHOG.read_bytes().replace(b'"cwd":"/Users/linhungfan', work))
    env = dict(os.environ, HOME=str(home))
    assert proc("mcp", "install", "claude-code", env=env).returncode == 0
    tools = f"{TOOLS},mcp__condense__search_history,mcp__condense__read_event"
    with AnthropicServer() as server:
        server.reply(
            use("toolu_history", "search_history", {"query": "CODEOWNERS gh api"}),
            use("toolu_event", "read_event", {"session_path": str(earlier), "event": 455}),
            "It fetched CODEOWNERS with gh api.",
        )
        run = resume_claude(
            clients.claude,
            session,
            tmp_path / "client",
            server,
            "How did we get the CODEOWNERS file last time?",
            extra=(f"--allowedTools={tools}",),
        )
        assert run.returncode == 0, run.stderr
        requests = server.model_requests()
    assert len(requests) == 3
    found = json.dumps(sent_result(requests[1], "toolu_history"))
    assert f"{earlier} #455 (agent, call to Bash" in found
    read = sent_result(requests[2], "toolu_event")
    text = read if isinstance(read, str) else "".join(b["text"] for b in read)
    assert text.startswith(f"{earlier} #455 (agent, call to Bash)")
    assert "repos/PostHog/posthog/contents/.github/CODEOWNERS" in text


def test_codex_searches_the_projects_earlier_rollout(
    rollout: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """An earlier rollout of the same project (the corpus' FundWise rollout, its folder
    made the one this rollout was started in) in Codex's sessions: the script the model runs calls
    `search_history`, then `read_event` on the hit; Codex sends both answers on."""
    from tests.clients.resume import codex_session_meta
    from tests.conftest import CORPUS, require_corpus

    require_corpus(CORPUS.parent / "codex")
    rollout = copy(rollout, tmp_path)
    run_dir = tmp_path / "run"
    codex_home = run_dir / "home" / ".codex"
    original = CORPUS.parent / "codex" / "FundWise.codex-session.jsonl"
    meta = codex_session_meta(original)
    earlier = (
        codex_home
        / "sessions"
        / "2026"
        / "05"
        / "04"
        / f"rollout-2026-05-04T14-42-03-{meta['id']}.jsonl"
    )
    earlier.parent.mkdir(parents=True)
    project = codex_session_meta(rollout)["cwd"]  # (the folder it was started in)
    earlier.write_bytes(original.read_bytes().replace(meta["cwd"].encode(), project.encode()))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = dict(os.environ, HOME=str(scratch), CODEX_HOME=str(scratch))
    assert proc("mcp", "install", "codex", env=env).returncode == 0
    table = (scratch / "config.toml").read_text()
    path = json.dumps(str(earlier))
    script = (
        "const found = await tools.mcp__condense__search_history({query: 'zerion agent'}); "
        "text(found.content[0].text); "
        f"const read = await tools.mcp__condense__read_event({{session_path: {path}, event: 4}}); "
        "text(read.content[0].text);"
    )
    call = {
        "type": "custom_tool_call",
        "id": "ctc_history",
        "status": "completed",
        "call_id": "call_history",
        "name": "exec",
        "input": script,
    }
    with OpenAIServer() as server:
        server.reply(call, "We planned a Zerion agent module.")
        run = resume_codex(
            clients.codex,
            rollout,
            run_dir,
            server,
            "What did we plan about Zerion last time?",
            extra=(*WINDOW, "--dangerously-bypass-approvals-and-sandbox", *REQUIRED),
            config_extra="\n" + table,
        )
        assert run.returncode == 0, run.stderr
        requests = server.model_requests()
    assert len(requests) == 2
    [output] = [i for i in requests[1]["input"] if i.get("type") == "custom_tool_call_output"][-1:]
    texts = [part["text"] for part in output["output"]]
    found, read = texts[1:3]
    assert f"{earlier} #4 (user" in found
    assert read.startswith(f"{earlier} #4 (user")
    assert "Zerion" in read
