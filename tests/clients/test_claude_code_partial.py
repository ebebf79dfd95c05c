"""Claude Code's partial compaction, driven through its own screen in tmux: in the
rewind menu (Esc Esc), a message, then "Summarize from here" (the conversation
before it is kept, what follows summarised) or "Summarize up to here" (what came
before it summarised, the rest kept).

Either writes a `compact_boundary` whose `compactMetadata.preservedSegment` names
the messages it kept (`headUuid`..`tailUuid`) and what they follow (`anchorUuid`:
the summary, or the boundary itself when they come before it). The request the
client sends next, recorded in the session and made again on resume, is the oracle.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import _claude_env, claude_sessions
from tests.clients.servers import AnthropicServer
from tests.clients.test_claude_code import assert_client_sends_the_view
from tests.clients.tmux import Screen, screen

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Claude Code client",
)

KEY = "sk-ant-api03-scripted-key-for-condense-tests"
QUESTIONS = (
    ("Keep the API stable.", "Noted one."),
    ("Second question", "Answer two."),
    ("Third question", "Answer three."),
)


@contextmanager
def interactive(clients: Clients, tmp: Path, server: AnthropicServer) -> Iterator[Screen]:
    """Claude Code's screen in the HOME and project under `tmp`, its first-run
    questions answered in `~/.claude.json` (onboarding, the folder trusted, the key
    approved)."""
    home, work = tmp / "home", tmp / "work"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []},
        "projects": {str(work): {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude.json").write_text(json.dumps(state))
    env = _claude_env(home, server) | {"ANTHROPIC_API_KEY": KEY, "TERM": "xterm-256color"}
    with screen([str(clients.claude)], env, work) as ui:
        ui.wait("\N{HEAVY RIGHT-POINTING ANGLE QUOTATION MARK ORNAMENT}")  # its prompt
        yield ui


def partially_compacted(clients: Clients, tmp: Path, choice: str) -> Path:
    """A session of three exchanges, then `choice` on the second question, then a
    fourth question; the session file."""
    with AnthropicServer() as server:
        server.reply(*(a for _, a in QUESTIONS), "SCRIPTED SUMMARY of the part chosen.", "Four.")
        with interactive(clients, tmp, server) as ui:
            for question, answer in QUESTIONS:
                ui.type(question)
                ui.wait(answer)
            ui.keys("Escape")
            ui.keys("Escape")
            ui.wait("Restore the code and/or conversation")
            ui.keys("Up")
            ui.keys("Up")  # the second question
            ui.keys("Enter")
            ui.wait(choice)
            ui.keys("Down")
            if choice == "Summarize up to here":
                ui.keys("Down")
            ui.keys("Enter")
            ui.wait("ummarized", 90)  # "Summarized conversation", "summarized with …"
            ui.keys("C-u")  # (the message chosen may be put back in the prompt)
            ui.type("Fourth question")
            ui.wait("Four.")
    [session] = claude_sessions(tmp)
    return session


def condense(proc: Callable[..., Any], *args: Any) -> str:
    done = proc(*args)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


@pytest.mark.parametrize(
    ("choice", "forgotten", "kept"),
    [
        ("Summarize from here", ["Second question", "Third question"], ["Keep the API stable."]),
        ("Summarize up to here", ["Keep the API stable."], ["Second question", "Third question"]),
    ],
)
def test_a_partial_compaction_from_the_screen_replays_as_the_client_sends_it(
    choice: str,
    forgotten: list[str],
    kept: list[str],
    clients: Clients,
    proc: Callable[..., Any],
    tmp_path: Path,
) -> None:
    session = partially_compacted(clients, tmp_path / "made", choice)
    [boundary] = [
        json.loads(x) for x in session.read_text().splitlines() if '"compact_boundary"' in x
    ]
    assert "preservedSegment" in boundary["compactMetadata"]
    # the request the client recorded after it (the fourth question) is condense's view
    checked = condense(proc, "check", session)
    assert "differs" not in checked
    view = condense(proc, "view", session)
    for text in kept:
        assert text in view
    for text in forgotten:
        assert text not in view
    audit = json.loads(condense(proc, "audit", session, "-f", "json"))
    [step] = audit["condensations"]
    assert step["forgotten_events"] == 2 * len(forgotten)  # each question and its answer
    # resumed, the client sends condense's view
    assert_client_sends_the_view(proc, clients, session, tmp_path / "resumed")
