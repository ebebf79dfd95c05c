"""Writing a client's configuration for condense: how to run this `condense`, JSON
settings merged key by key, and a TOML table of Codex's `config.toml` replaced as
text (so the user's comments and layout stay). Files are replaced whole
(`core.files`), and a file condense cannot read is left alone with a clear error."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from condense_cli.core.errors import ConfigError


def condense_argv(argv0: str, python: str, project: bool = False) -> list[str]:
    """How a client runs this `condense`: its console script by absolute path, or the
    Python that runs it (`python -m condense_cli`); for a project's settings, shared
    with its team, plain `condense` when that is on PATH (an absolute path into one
    person's virtual environment is broken for everyone else)."""
    if project and shutil.which("condense") is not None:
        return ["condense"]
    path = Path(argv0)
    if path.name == "__main__.py" or path.suffix == ".py" or not path.exists():
        return [python, "-m", "condense_cli"]
    return [str(path.resolve())]


def condense_command(argv0: str, python: str, project: bool = False) -> str:
    """`condense_argv` as one shell command."""
    return shlex.join(condense_argv(argv0, python, project))


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object at `path` ({} when there is no file); ConfigError when it is
    not one."""
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}: is not valid JSON ({exc.msg})",
            hint="fix the file by hand first: condense will not rewrite settings it cannot read",
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


def json_text(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def with_toml_table(text: str, header: str, body: str | None) -> str:
    """`text` (a TOML file) with the table `[header]` replaced by `body` (its lines
    after the header), added at the end when missing, or removed when `body` is None."""
    start = re.search(rf"(?m)^\[{re.escape(header)}\]\s*$", text)
    if start is None:
        if body is None:
            return text
        gap = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{gap}[{header}]\n{body}"
    after = re.search(r"(?m)^\[", text[start.end() :])
    end = start.end() + after.start() if after is not None else len(text)
    table = "" if body is None else f"[{header}]\n{body}\n"
    return text[: start.start()] + table + text[end:]


def change_file(path: Path, old: str, new: str, dry_run: bool) -> str | None:
    """Replace the file at `path` (whose text is `old`, "" when missing) by `new`, or
    with `dry_run` return the change as a unified diff; None when nothing changes."""
    import difflib

    from condense_cli.core.files import replace_file

    if old == new:
        return None
    if dry_run:
        lines = difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), str(path), str(path)
        )
        return "".join(lines)
    replace_file(path, new.encode("utf-8"))
    return ""
