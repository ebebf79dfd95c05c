"""`condense hook` inside the real Codex, offline against the scripted server.

Codex's `SessionStart` hook with the source `compact` runs after its own
compaction and adds what it answers to the next request: condense gives back there
what still holds. (Codex's `PreCompact` can neither add to the summariser's
instructions nor block, and its `PostCompact` gets no summary: nothing is installed
for them.)
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
from tests.clients.resume import resume_codex
from tests.clients.servers import OpenAIServer
from tests.clients.test_codex_today import compacted, copy

__all__ = ["compacted"]  # a fixture used here

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the Codex client",
)


def test_codex_gets_back_what_still_holds_after_its_own_compaction(
    compacted: Path, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    rollout = copy(compacted, tmp_path)
    codex_home = tmp_path / "run" / "home" / ".codex"
    env = dict(os.environ, HOME=str(tmp_path / "run" / "home"), CODEX_HOME=str(codex_home))
    installed = proc("hook", "install", "codex", env=env)
    assert installed.returncode == 0, installed.stderr
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert list(hooks) == ["SessionStart"] and hooks["SessionStart"][0]["matcher"] == "compact"
    before = rollout.read_bytes()
    with OpenAIServer() as server:
        server.input_tokens = 60_000
        server.reply("ENCRYPTED-3", "ok")
        run = resume_codex(
            clients.codex,
            rollout,
            tmp_path / "run",
            server,
            "Run it again.",
            compact_limit=50_000,
            # Codex runs a new hook only once its user reviewed it (/hooks); a test cannot
            extra=("--dangerously-bypass-hook-trust",),
        )
        assert run.returncode == 0, run.stderr
        requests = server.model_requests()
    assert rollout.read_bytes() == before  # the hook reads the rollout, never writes it
    assert len(requests) == 2  # Codex compacted first (its last count is over the limit)
    sent = json.dumps(requests[1]["input"], ensure_ascii=False)
    assert "condense read this session's log as it was before the compaction" in sent
    assert "keep the API stable" in sent
