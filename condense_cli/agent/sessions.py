"""Where a client keeps the session it is running in (checked against Claude Code
2.1.330 and Codex 0.169.0), found from the working directory it started in.

- Claude Code: `~/.claude/projects/<the directory, every character that is not an
  ASCII letter or digit made "-">/<session id>.jsonl`.
- Codex: `$CODEX_HOME` (else `~/.codex`) `/sessions/YYYY/MM/DD/rollout-*.jsonl`, the
  rollout whose first line (`session_meta`) names the directory as its `cwd`.

The session is the newest such file: the one written last.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from condense_cli.core.errors import ConfigError

CLIENTS = ("claude-code", "codex")
CODEX_SCAN = 200  # rollouts looked at, newest first, for the one of a directory


def claude_project(cwd: Path, home: Path) -> Path:
    """The folder Claude Code keeps the sessions of `cwd` in."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def codex_home(home: Path) -> Path:
    return Path(os.environ.get("CODEX_HOME") or home / ".codex")


def find_session(client: str, cwd: Path, home: Path) -> Path:
    """The session file of the newest session of `client` in `cwd`; ConfigError
    (saying where it looked) when there is none."""
    if client == "claude-code":
        folder = claude_project(cwd, home)
        found = sorted(folder.glob("*.jsonl"), key=_mtime, reverse=True)
        if found:
            return found[0]
        raise ConfigError(
            f"no Claude Code session of {cwd} in {folder}",
            hint="start the server from the project's folder, or give --log",
        )
    sessions = codex_home(home) / "sessions"
    rollouts = sorted(sessions.rglob("rollout-*.jsonl"), key=_mtime, reverse=True)
    for rollout in rollouts[:CODEX_SCAN]:
        if _codex_cwd(rollout) == str(cwd):
            return rollout
    raise ConfigError(
        f"no Codex rollout of {cwd} in {sessions}",
        hint="start the server from the project's folder, or give --log",
    )


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _codex_cwd(rollout: Path) -> str | None:
    try:
        with rollout.open(encoding="utf-8") as lines:
            first = json.loads(lines.readline())
    except (OSError, ValueError):
        return None
    payload = first.get("payload") if isinstance(first, dict) else None
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return cwd if isinstance(cwd, str) else None
