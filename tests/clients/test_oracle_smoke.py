"""The real clients resume a corpus session against the scripted server, offline.

Skipped (with the reason) when node/npm are missing; otherwise the pinned
clients are installed into `.clients/` on first use, and a failure to install
them is an error, not a skip (so CI, which has node, always runs these).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import resume_claude, resume_codex
from tests.clients.servers import AnthropicServer, OpenAIServer

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
CLAUDE_SESSION = CORPUS / "claude-code" / "FundWise.claude-session.jsonl"
CODEX_ROLLOUT = CORPUS / "codex" / "FundWise.codex-session.jsonl"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code and Codex clients",
)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _texts(content: Any) -> list[str]:
    """The text blocks of a message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") in ("text", "input_text")]


def last_claude_prompt(session: Path) -> str:
    """The text of the last prompt the user typed in a Claude Code session file."""
    prompts = [
        text
        for d in _lines(session)
        if d.get("type") == "user" and not (d.get("isMeta") or d.get("isCompactSummary"))
        for text in _texts(d["message"]["content"])
        if not text.startswith("<")
    ]
    return prompts[-1]


def last_codex_prompt(rollout: Path) -> str:
    """The text of the last user message of a Codex rollout, not injected context."""
    prompts = [
        text
        for d in _lines(rollout)
        if d["type"] == "response_item"
        and d["payload"].get("type") == "message"
        and d["payload"].get("role") == "user"
        for text in _texts(d["payload"]["content"])
        if not text.startswith(("<", "# AGENTS.md"))
    ]
    return prompts[-1]


def test_last_prompts_of_the_corpus_sessions() -> None:
    assert last_claude_prompt(CLAUDE_SESSION).startswith("> Pick up FW-005 first.")
    assert last_codex_prompt(CODEX_ROLLOUT) == "use  apply grant skill"


def test_claude_code_resume_sends_the_session(
    clients: Clients, anthropic: AnthropicServer, tmp_path: Path
) -> None:
    before = len(_lines(CLAUDE_SESSION))
    run = resume_claude(clients.claude, CLAUDE_SESSION, tmp_path, anthropic.reply("scripted ok"))
    assert (run.returncode, run.stdout.strip()) == (0, "scripted ok"), run.stderr
    assert [(r.method, r.path.split("?")[0]) for r in anthropic.requests] == [
        ("POST", "/v1/messages")
    ]
    messages = anthropic.model_requests()[0]["messages"]
    user_texts = [t for m in messages if m["role"] == "user" for t in _texts(m["content"])]
    assert last_claude_prompt(CLAUDE_SESSION) in user_texts
    assert _texts(messages[-1]["content"])[-1] == "continue"
    appended = _lines(run.session)[before:]
    assert [d["message"]["content"] for d in appended if d.get("type") == "user"] == ["continue"]


def test_codex_resume_sends_the_rollout(
    clients: Clients, openai: OpenAIServer, tmp_path: Path
) -> None:
    before = len(_lines(CODEX_ROLLOUT))
    run = resume_codex(clients.codex, CODEX_ROLLOUT, tmp_path, openai.reply("scripted ok"))
    assert (run.returncode, run.stdout.strip()) == (0, "scripted ok"), run.stderr
    assert [(r.method, r.path) for r in openai.requests] == [
        ("GET", "/v1/responses"),  # the WebSocket attempt, refused with 426
        ("POST", "/v1/responses"),
    ]
    items = openai.model_requests()[0]["input"]
    user_texts = [
        t
        for it in items
        if it.get("type") == "message" and it.get("role") == "user"
        for t in _texts(it["content"])
    ]
    assert last_codex_prompt(CODEX_ROLLOUT) in user_texts
    assert _texts(items[-1]["content"]) == ["continue"]
    appended = [
        _texts(d["payload"]["content"])
        for d in _lines(run.session)[before:]
        if d["type"] == "response_item" and d["payload"].get("role") == "user"
    ]
    assert ["continue"] in appended
