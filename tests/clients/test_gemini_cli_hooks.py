"""`condense hook` and `condense mcp` inside the real Gemini CLI, offline against the
scripted server.

Gemini CLI has no hook after a compression, and its `PreCompress` is only told (it
fires before every request, and what it prints is not read). Its `BeforeAgent` runs
before each prompt and adds what it answers to it: `condense hook post-compact`
there gives back what the last compression's snapshot left out, once, at the first
prompt after it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.clients.install import Clients
from tests.clients.resume import gemini_run
from tests.clients.servers import GeminiServer

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run Gemini CLI",
)

MODEL = ("-m", "gemini-2.5-pro")
READ = {"functionCall": {"name": "read_file", "args": {"file_path": "notes.txt"}}}
TOLD = "the snapshot its last compression wrote left out"


def last_prompt(server: GeminiServer) -> str:
    """What the last request sent of the user's last turn."""
    return json.dumps(server.model_requests()[-1]["contents"][-1], ensure_ascii=False)


def test_the_first_prompt_after_a_compression_gets_back_what_its_snapshot_left_out(
    clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = dict(os.environ, HOME=str(home))
    installed = proc("hook", "install", "gemini-cli", env=env)
    assert installed.returncode == 0, installed.stderr
    hooks = json.loads((home / ".gemini" / "settings.json").read_text())["hooks"]
    assert list(hooks) == ["BeforeAgent"]
    assert hooks["BeforeAgent"][0]["hooks"][0]["timeout"] == 60_000  # milliseconds
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "notes.txt").write_text("the parser lives in src/parse.py\n")
    with GeminiServer() as server:
        server.reply("Noted.")
        first = gemini_run(clients.gemini, tmp_path, server, "Keep the API stable.", extra=MODEL)
        assert first.returncode == 0, first.stderr[-2000:]
        assert TOLD not in last_prompt(server)
    with GeminiServer() as server:  # compresses before its second request
        server.prompt_tokens = 990_000
        server.side_answer = "<state_snapshot>The user asked to read notes.</state_snapshot>"
        server.reply(READ, "Done.")
        run = gemini_run(
            clients.gemini, tmp_path, server, "Read the notes.", True, (*MODEL, "--yolo")
        )
        assert run.returncode == 0, run.stderr[-2000:]
        assert "Keep the API stable." not in json.dumps(server.model_requests()[-1]["contents"])
    before = run.session.read_bytes()
    with GeminiServer() as server:
        server.reply("Fine.")
        after = gemini_run(clients.gemini, tmp_path, server, "What next?", True, MODEL)
        assert after.returncode == 0, after.stderr[-2000:]
        told = last_prompt(server)
    assert run.session.read_bytes().startswith(before)  # the hook reads, never writes
    assert "<hook_context>" in told and TOLD in told
    assert "Keep the API stable." in told  # the user's constraint, given back
    with GeminiServer() as server:  # once: the next prompt came after the compression
        server.reply("Sure.")
        again = gemini_run(clients.gemini, tmp_path, server, "And then?", True, MODEL)
        assert again.returncode == 0, again.stderr[-2000:]
        assert TOLD not in last_prompt(server)


def test_gemini_cli_lists_the_mcp_server_condense_installs(
    clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text('{"ui": {"theme": "Default"}}')
    env = dict(os.environ, HOME=str(home))
    installed = proc("mcp", "install", "gemini-cli", env=env)
    assert installed.returncode == 0, installed.stderr
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["ui"] == {"theme": "Default"}  # the rest kept
    assert settings["mcpServers"]["condense"]["args"][-3:] == ["mcp", "--client", "gemini-cli"]
    node = shutil.which("node") or "node"
    listed = subprocess.run(
        [node, str(clients.gemini), "mcp", "list"],
        env={"HOME": str(home), "PATH": os.environ["PATH"], "GEMINI_CLI_TRUST_WORKSPACE": "true"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert "condense" in listed.stdout + listed.stderr
