"""What marks a file as a Claude Code session; cheap to import, so that detection
loads `claude_code` only for a log it reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.files import reading_head

NAME = "claude-code"
HEAD_BYTES = 1 << 18  # where a session's first `cwd` is looked for
# Types seen first in a session file (older sessions start with a `summary` line).
FIRST_TYPES = frozenset(
    {"queue-operation", "file-history-snapshot", "summary", "permission-mode", "user", "system"}
)


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` is a Claude Code session."""
    if any(k in first for k in ("parentUuid", "leafUuid", "sessionId")):
        return "payload" not in first
    return first.get("type") in FIRST_TYPES and "action" not in first


def project_of(log: str) -> str | None:
    """The folder a session worked in: the `cwd` of its first line that records one
    (the folder the client started in, which names its project folder), looked for in
    its first `HEAD_BYTES`; None: a file whose head records none."""
    try:
        with reading_head(log, HEAD_BYTES) as file:
            read = 0
            while read < HEAD_BYTES and (line := file.readline(HEAD_BYTES - read)):
                read += len(line)
                cwd = _cwd(line) if b'"cwd"' in line else None
                if cwd is not None:
                    return cwd
    except OSError:
        pass
    return None


def session_of(log: str) -> str:
    """The session a log is part of: a subagent's transcript (`agent-<id>.jsonl`, in
    the session's own `subagents` folder, or beside the sessions as the client wrote
    them before) is part of the session that started it, the one its lines name,
    where that session's file is; any other log is its own."""
    path = Path(log)
    if not (path.name.startswith("agent-") and path.suffix == ".jsonl"):
        return log
    folder = path.parent.parent.parent if path.parent.name == "subagents" else path.parent
    try:
        with reading_head(log, HEAD_BYTES) as file:
            first = orjson.loads(file.readline(HEAD_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return log
    session = first.get("sessionId") if isinstance(first, dict) else None
    if not isinstance(session, str) or not session or "/" in session:
        return log
    started = folder / f"{session}.jsonl"
    return str(started) if started.is_file() else log


def _cwd(line: bytes) -> str | None:
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    cwd = data.get("cwd") if isinstance(data, dict) else None
    return cwd if isinstance(cwd, str) and cwd else None
