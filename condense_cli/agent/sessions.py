"""Where a client keeps the session it is running in (checked against Claude Code
2.1.330 to 2.1.332 and Codex 0.169.0 to 0.171.0), found from the working directory it
started in.

- Claude Code: `~/.claude/projects/<the directory, every character that is not an
  ASCII letter or digit made "-">/<session id>.jsonl`.
- Codex: `$CODEX_HOME` (else `~/.codex`) `/sessions/YYYY/MM/DD/rollout-*.jsonl`, the
  rollout whose first line (`session_meta`) or last `turn_context` (a thread resumed
  elsewhere) names the directory as its `cwd`.

The session is the newest such file: the one written last (only a regular file: no
link, no FIFO).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from condense_cli.core.errors import ConfigError

CLIENTS = ("claude-code", "codex", "gemini-cli")
CODEX_SCAN = 200  # rollouts looked at, newest first, for the one of a directory
TAIL_BYTES = 256 * 1024  # where a rollout's last turn_context is looked for


def claude_project(cwd: Path, home: Path) -> Path:
    """The folder Claude Code keeps the sessions of `cwd` in."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def codex_home(home: Path) -> Path:
    return Path(os.environ.get("CODEX_HOME") or home / ".codex")


def gemini_chats(cwd: Path, home: Path) -> Path:
    """The folder Gemini CLI keeps the sessions of `cwd` in: `~/.gemini/tmp/<name>/chats`,
    the name from its `projects.json` (0.61.0), else the folder's SHA-256 (2025
    releases)."""
    import hashlib

    root = home / ".gemini"
    try:
        projects = json.loads((root / "projects.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        projects = {}
    listed = projects.get("projects") if isinstance(projects, dict) else None
    name = listed.get(str(cwd)) if isinstance(listed, dict) else None
    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        name = hashlib.sha256(str(cwd).encode()).hexdigest()
    return root / "tmp" / name / "chats"


def find_session(client: str, cwd: Path, home: Path) -> Path:
    """The session file of the newest session of `client` in `cwd`; ConfigError
    (saying where it looked) when there is none."""
    if client == "claude-code":
        folder = claude_project(cwd, home)
        found = sorted(filter(_written, folder.glob("*.jsonl")), key=_mtime, reverse=True)
        if found:
            return found[0]
        raise ConfigError(
            f"no Claude Code session of {cwd} in {folder}",
            hint="start the server from the project's folder, or give --log",
        )
    if client == "gemini-cli":
        folder = gemini_chats(cwd, home)
        files = [*folder.glob("session-*.jsonl"), *folder.glob("session-*.json")]
        found = sorted(filter(_written, files), key=_mtime, reverse=True)
        if found:
            return found[0]
        raise ConfigError(
            f"no Gemini CLI session of {cwd} in {folder}",
            hint="start the server from the project's folder, or give --log",
        )
    sessions = codex_home(home) / "sessions"
    rollouts = sorted(filter(_written, sessions.rglob("rollout-*.jsonl")), key=_mtime, reverse=True)
    for rollout in rollouts[:CODEX_SCAN]:
        if str(cwd) in _codex_cwds(rollout):
            return rollout
    raise ConfigError(
        f"no Codex rollout of {cwd} in {sessions}",
        hint="start the server from the project's folder, or give --log",
    )


def _written(path: Path) -> bool:
    """Whether `path` is a file a client wrote: a regular file, not a link (a link to
    `/etc/shadow` placed among the sessions is never read) or a FIFO."""
    import stat

    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except OSError:
        return False


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _codex_cwds(rollout: Path) -> set[str]:
    """The folders a rollout says it ran in: its `session_meta`'s and its last
    `turn_context`'s (read from the file's tail)."""
    found: set[str] = set()
    try:
        with rollout.open("rb") as lines:
            first = lines.readline()
            lines.seek(max(0, rollout.stat().st_size - TAIL_BYTES))
            tail = lines.read().splitlines()
    except OSError:
        return found
    contexts = [x for x in tail if b'"type":"turn_context"' in x]
    for raw in [first, *contexts[-1:]]:
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        payload = line.get("payload") if isinstance(line, dict) else None
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        if isinstance(cwd, str):
            found.add(cwd)
    return found
