"""The real clients read every file `condense mcp install` wrote in the attack cases
of issue 55 (`tests/agent/test_install.py`): Codex lists the server from its
`config.toml` (`codex mcp list --json`, which refuses a file it cannot parse), and
Claude Code finds it in `~/.claude.json` (`claude mcp get`). Offline, about a second
a case."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_install import CLAUDE_CASES, CODEX_CASES, claude_home, codex_config
from tests.clients.install import Clients

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None or shutil.which("npm") is None,
    reason="node and npm are needed to install and run the clients",
)


def codex_servers(clients: Clients, env: dict[str, str]) -> dict[str, Any]:
    listed = subprocess.run(
        [str(clients.codex), "mcp", "list", "--json"], capture_output=True, env=env, timeout=60
    )
    assert listed.returncode == 0, listed.stderr.decode()
    return {server["name"]: server for server in json.loads(listed.stdout)}


@pytest.mark.parametrize("case", sorted(CODEX_CASES))
def test_codex_reads_the_config_condense_wrote(
    case: str, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    _, env = codex_config(tmp_path, CODEX_CASES[case])
    assert proc("mcp", "install", "codex", env=env).returncode == 0
    server = codex_servers(clients, env)["condense"]
    assert server["transport"]["args"][-3:] == ["mcp", "--client", "codex"]
    assert server["startup_timeout_sec"] == 60
    if "TOKEN_FILE" in CODEX_CASES[case]:
        assert server["transport"]["env"] == {"TOKEN_FILE": "/home/u/.t"}
    assert proc("mcp", "uninstall", "codex", env=env).returncode == 0
    assert "condense" not in codex_servers(clients, env)  # and nothing of it left behind


@pytest.mark.parametrize("case", sorted(CLAUDE_CASES))
def test_claude_code_reads_the_settings_condense_wrote(
    case: str, clients: Clients, proc: Callable[..., Any], tmp_path: Path
) -> None:
    _, env = claude_home(tmp_path, ".claude.json", CLAUDE_CASES[case])
    assert proc("mcp", "install", "claude-code", env=env).returncode == 0
    got = subprocess.run(
        [str(clients.claude), "mcp", "get", "condense"], capture_output=True, env=env, timeout=60
    )
    said = got.stdout.decode()
    assert got.returncode == 0, said + got.stderr.decode()
    assert "Scope: User config" in said and "mcp --client claude-code" in said
    assert proc("mcp", "uninstall", "claude-code", env=env).returncode == 0
    gone = subprocess.run(
        [str(clients.claude), "mcp", "get", "condense"], capture_output=True, env=env, timeout=60
    )
    assert gone.returncode != 0 and b'No MCP server named "condense"' in gone.stderr
