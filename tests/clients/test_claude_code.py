"""The real Claude Code client is the oracle for the claude-code dialect.

Each test resumes a session with the pinned client against the scripted
server and compares the messages of its one model request with
`condense view --format json` of the same file, grouped into API messages the
way the client groups lines (`claude_code.api_messages`).

What the comparison ignores, exactly (all of it the client's own text; the rules
are `claude_code.requests.comparable`, which `check` applies to the requests a
session records):
- the request's `system`, `tools`, `metadata`, `thinking`, `max_tokens`, ...:
  only `messages` is compared;
- in `messages`, messages of the role `system`: the client's rendering of
  attachment lines (its environment, the deferred tools, the agent types);
- in `messages`, every text block that starts with `<system-reminder>`: the
  client's rendering of attachment lines, its environment, date, model,
  skills and tool reminders, and its wrapping of task notifications (so
  condense's user lines with `origin.kind == "task-notification"` are left
  out on condense's side: the client sends them only inside that wrapper);
- a `\n\n<system-reminder>\n...</system-reminder>` the client appends to a
  tool result's text (a task reminder folded into the result before it);
- the text block `Tool loaded.` the client adds after a tool result that
  holds `tool_reference` blocks, and `tool_reference` blocks naming a tool
  the request does not offer (the client drops them);
- the `cache_control` and `caller` keys the client adds to blocks;
- the new turn: the prompt given to `claude -p` ("continue"), which the client
  joins to the last message when the view ends with a user message.

`condense view --format messages` is checked against the same request: the
client's messages, less what is ignored above, mapped to chat messages by
`claude_code_messages.chat_messages` (the mapping the dialect documents), equal
condense's messages with the new turn added the way the client adds it (and
the task-notification lines left out, as above).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from condense_cli.dialects.claude_code.events import ClaudeEvent, api_messages
from condense_cli.dialects.claude_code.messages import chat_messages, resume_repairs
from condense_cli.dialects.claude_code.requests import comparable, sent_events
from tests.clients.install import Clients
from tests.clients.resume import resume_claude
from tests.clients.servers import AnthropicServer
from tests.conftest import CONDENSE
from tests.fake_llm import FakeLLM

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "claude-code"
SESSIONS = sorted(CORPUS.glob("*.jsonl"))
FUNDWISE = CORPUS / "FundWise.claude-session.jsonl"
PROMPT = "continue"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code client",
)


@pytest.fixture(autouse=True)
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONDENSE_CONFIG", raising=False)


def condense_view(proc: Callable[..., Any], session: Path) -> list[ClaudeEvent]:
    done = proc("view", session, "-f", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["dialect"] == "claude-code"
    return [ClaudeEvent(e, None, None) for e in data["events"]]


def expected_request(events: list[ClaudeEvent], tools: set[str]) -> list[dict[str, Any]]:
    """condense's view as the client should send it: its resume repairs made, then
    the new prompt."""
    repaired, _ = resume_repairs(list(events))
    sent = sent_events(repaired)
    prompt = ClaudeEvent(
        {"type": "user", "message": {"role": "user", "content": PROMPT}}, None, None
    )
    return comparable(api_messages([*sent, prompt]), tools)


def condense_messages(proc: Callable[..., Any], session: Path) -> list[dict[str, Any]]:
    done = proc("view", session, "-f", "messages")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _parts(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def with_new_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """condense's messages less task notifications, then the prompt as the client
    adds it: joined to a last user message (its last text ending with a newline),
    else as a user message of its own."""
    out = []
    for message in messages:
        parts = [
            p
            for p in _parts(message["content"])
            if not str(p.get("text", "")).startswith("<task-notification>")
        ]
        if message["role"] == "user" and not parts:
            continue
        if message["role"] == "user":
            text_only = len(parts) == 1 and parts[0]["type"] == "text"
            message = {**message, "content": parts[0]["text"] if text_only else parts}
        out.append(message)
    last = out[-1] if out else None
    if last is not None and last["role"] == "user":
        parts = [dict(p) for p in _parts(last["content"])]
        parts[-1]["text"] += "\n"
        out[-1] = {**last, "content": [*parts, {"type": "text", "text": PROMPT}]}
    else:
        out.append({"role": "user", "content": PROMPT})
    return out


def resume(clients: Clients, session: Path, tmp: Path, server: AnthropicServer, **kw: Any) -> Any:
    run = resume_claude(clients.claude, session, tmp, server, **kw)
    assert run.returncode == 0, run.stderr
    return run


def assert_client_sends_the_view(
    proc: Callable[..., Any], clients: Clients, session: Path, tmp: Path
) -> Path:
    """Resume `session`; the one request it makes is condense's view. Returns the
    session file as the client left it."""
    with AnthropicServer() as server:
        run = resume(clients, session, tmp, server.reply("scripted ok"))
        [body] = server.model_requests()
    tools = {t["name"] for t in body["tools"]}
    assert comparable(body["messages"], tools) == expected_request(
        condense_view(proc, session), tools
    )
    sent = chat_messages(comparable(body["messages"], tools))
    assert sent == with_new_turn(condense_messages(proc, session))
    # the resumed session records the request: condense's second oracle agrees
    checked = proc("check", run.session)
    assert checked.returncode == 0, checked.stdout
    assert b"differs" not in checked.stdout and b"incomplete" not in checked.stdout, checked.stdout
    return run.session


@pytest.mark.parametrize("session", SESSIONS, ids=[s.name.split(".")[0] for s in SESSIONS])
def test_condense_view_is_what_the_client_sends(
    session: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    copy = tmp_path / session.name
    shutil.copyfile(session, copy)
    assert_client_sends_the_view(proc, clients, copy, tmp_path / "client")


def _llm_config(tmp_path: Path, fake: FakeLLM) -> Path:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[llm]\nmodel = "openai/test-model"\nbase_url = "{fake.base_url}"\n'
        'api_key = "sk-test"\ntimeout = 10\nnum_retries = 0\n'
    )
    return config


@pytest.mark.parametrize("condenser", ["amortized_forgetting", "llm"])
def test_the_client_follows_a_condensation_and_carries_on(
    condenser: str, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = tmp_path / FUNDWISE.name
    shutil.copyfile(FUNDWISE, session)
    fake = FakeLLM().text("SUMMARY: FundWise roadmap written; FW-005 shipped in two commits.")
    try:
        config = _llm_config(tmp_path, fake)
        done = proc("run", session, "-c", config, "-t", condenser, "-s", "condenser.max_size=40")
    finally:
        fake.close()
    assert done.returncode == 0, done.stderr
    view = condense_view(proc, session)
    assert len(view) == (20 if condenser == "llm" else 19)
    assert any(e.is_summary for e in view) == (condenser == "llm")

    resumed = assert_client_sends_the_view(proc, clients, session, tmp_path / "first")
    # the lines the client appended still view, check and condense
    after = condense_view(proc, resumed)
    assert [e.text for e in after[len(view) :]] == [PROMPT, "scripted ok"]
    assert proc("check", resumed).returncode == 0
    again = proc("run", resumed, "-t", "amortized_forgetting", "-s", "condenser.max_size=4")
    assert again.returncode == 0, again.stderr
    assert proc("check", resumed).returncode == 0
    assert_client_sends_the_view(proc, clients, resumed, tmp_path / "second")


def test_a_compaction_by_the_client_replays_to_what_it_sends_next(
    clients: Clients, anthropic: AnthropicServer, proc: Callable[..., Any], tmp_path: Path
) -> None:
    session = tmp_path / FUNDWISE.name
    shutil.copyfile(FUNDWISE, session)
    anthropic.reply("<summary>CLIENT SUMMARY: the roadmap and FW-005.</summary>")
    run = resume(clients, session, tmp_path / "compact", anthropic, prompt="/compact")
    [summary_request] = anthropic.model_requests()
    assert "CRITICAL: Respond with TEXT ONLY" in json.dumps(summary_request["messages"][-1])
    compacted = tmp_path / "compacted.jsonl"
    shutil.copyfile(run.session, compacted)
    view = condense_view(proc, compacted)
    assert view[0].is_summary and "CLIENT SUMMARY: the roadmap and FW-005." in view[0].text
    assert proc("check", compacted).returncode == 0
    stats = json.loads(proc("stats", compacted, "--no-tokens", "-f", "json").stdout)
    assert [c["log"]["trigger"] for c in stats["condensations"]] == ["manual"]
    assert_client_sends_the_view(proc, clients, compacted, tmp_path / "next")


@pytest.mark.real_model
def test_the_client_follows_a_summary_a_real_model_wrote(
    clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    """`llm` with SmolLM2 behind llama.cpp's server (prompts folded to its window),
    then Claude Code resumed sends exactly the condensed view."""
    from tests.real_model import serving

    session = tmp_path / FUNDWISE.name
    shutil.copyfile(FUNDWISE, session)
    with serving(tmp_path) as model:
        config = tmp_path / "config.toml"
        config.write_text(
            model.config() + '[condenser]\ntype = "llm"\nmax_size = 40\nmax_event_length = 100\n'
        )
        command = [str(CONDENSE), "run", str(session), "-c", str(config)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    view = condense_view(proc, session)
    assert len(view) == 20 and any(e.is_summary for e in view)
    assert_client_sends_the_view(proc, clients, session, tmp_path / "resumed")
