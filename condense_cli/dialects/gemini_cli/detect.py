"""What marks a file as a Gemini CLI session; cheap to import, so that detection
loads `gemini_cli` only for a log it reads."""

from __future__ import annotations

import posixpath
from typing import Any

from condense_cli.core.files import reading_head

NAME = "gemini-cli"
CHATS = "chats"  # the folder of a project's sessions, under ~/.gemini/tmp/<project>/
PROJECT_ROOT = ".project_root"  # the project's path, beside `chats/` (from 0.5x)
ROOT_BYTES = 1 << 16  # a path is read to this


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` is a Gemini CLI session: its
    header names the session and the project's hash (a Claude Code line never has
    `projectHash`)."""
    return (
        isinstance(first.get("sessionId"), str)
        and isinstance(first.get("projectHash"), str)
        and "type" not in first
    )


def project_of(log: str) -> str | None:
    """The project a session is of: the path the client wrote beside its `chats/`
    folder (`.project_root`), else that project folder's name (a slug, or the hash of
    the path in the clients before 0.5x); None for a file not in a `chats/` folder."""
    chats, _ = posixpath.split(log)
    project, name = posixpath.split(chats)
    if name != CHATS:
        return None
    try:
        with reading_head(f"{project}/{PROJECT_ROOT}", ROOT_BYTES) as file:
            root = file.read(ROOT_BYTES).decode("utf-8", errors="replace").strip()
    except OSError:
        root = ""
    return root or posixpath.basename(project) or None
