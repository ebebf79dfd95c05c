"""`condense search` while the real Claude Code writes the session it searches.

The scripted model runs eight `Bash` steps, each a little slow, so the client writes
the session line by line over some seconds; `search` runs again and again meanwhile
(a real subprocess each time, one index), and must never fail, never go back, and
once the client is done find every step, at the numbers `view` gives them.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.clients.install import Clients
from tests.clients.resume import new_claude_session
from tests.clients.servers import AnthropicServer
from tests.clients.test_claude_code_today import bash

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the clients",
)

STEPS = 8


def test_search_stays_right_while_the_client_writes_the_session(
    clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    projects = tmp_path / "client" / "home" / ".claude" / "projects"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    made: list[Path] = []
    with AnthropicServer() as server:
        steps = [bash(f"toolu_{n}", f"sleep 0.3; echo step{n} marker") for n in range(STEPS)]
        server.reply(*steps, "Every step ran.")
        writer = threading.Thread(
            target=lambda: made.append(
                new_claude_session(
                    clients.claude, tmp_path / "client", server, ["Run the eight steps."]
                )
            )
        )
        writer.start()
        counts: list[int] = []
        while writer.is_alive():
            if not projects.is_dir() or not any(projects.rglob("*.jsonl")):
                writer.join(0.05)  # (the client has not begun the session yet)
                continue
            done = proc("search", "marker", projects, "--who", "tool", "-f", "json", env=env)
            assert done.returncode == 0, done.stderr
            assert b"Traceback" not in done.stderr
            counts.append(len(orjson.loads(done.stdout)["hits"]))
        writer.join()
    [session] = made
    assert len(counts) >= 2  # searched while the client wrote
    assert counts == sorted(counts)  # the index never went back
    assert len(set(counts)) >= 3  # and it followed the session as it grew
    done = proc("search", "marker", projects, "--who", "tool", "-f", "json", env=env)
    hits = orjson.loads(done.stdout)["hits"]
    assert sorted(h["snippet"].strip(" …") for h in hits) == [
        f"step{n} [marker]" for n in range(STEPS)
    ]
    # each hit is numbered as `view` numbers the event: its block there holds the step
    blocks = proc("view", session, env=env).stdout.decode().split("\n\n#")
    shown = {block.split(" ", 1)[0]: block for block in blocks}
    for hit in hits:
        step = hit["snippet"].strip(" …").split(" ")[0]
        assert step in shown[hit["id"]], hit
