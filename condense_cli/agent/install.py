"""Writing a client's configuration for condense: how to run this `condense`, and
changes to the client's own files that keep everything the user wrote. JSON is read
with every number kept as written (`1e400` stays `1e400`) and written back with only
our entries changed; Codex's `config.toml` is edited through tomlkit, which keeps the
user's comments and layout, and the result is checked against what was meant before
it is written. A file that does not parse, is not a regular file, or cannot be
written is refused with a clear error and left as it is (`core.files` reads it
bounded, locks, compares and replaces it)."""

from __future__ import annotations

import copy
import json
import re
import secrets
import shlex
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from condense_cli.core.errors import ConfigError, LogBusyError, os_hint

SETTINGS_LIMIT = 64 << 20  # no client's settings file is near this; ~/.claude.json is the largest
ATTEMPTS = 5  # times a change is made again when the file changed while it was made


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


# --- changing a file -------------------------------------------------------------------


def edit_settings(path: Path, change: Callable[[str], str], dry_run: bool) -> str | None:
    """Change the client's file at `path` by `change` (its text, "" when there is no
    file, to the new text). The file is read only when it is a regular UTF-8 file of at
    most `SETTINGS_LIMIT` and can be written; the change is made under the file's lock
    and the file read again just before it is replaced, so a writer that does not take
    the lock loses nothing either. With `dry_run`, the change as a unified diff. None
    when nothing changes, "" when it was written."""
    from condense_cli.core.files import claimed, replace_file

    if dry_run:
        old = _settings_text(path)
        return _diff(path, old, new) if (new := change(old)) != old else None
    try:
        with claimed(path):
            for _ in range(ATTEMPTS):
                old = _settings_text(path)
                new = change(old)
                if new == old:
                    return None
                if _settings_text(path) == old:
                    replace_file(path, new.encode("utf-8"))
                    return ""
    except TimeoutError as exc:
        raise LogBusyError(
            f"{path}: {exc}", hint="try again once the client has saved its settings"
        ) from None
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot be written: {exc.strerror or exc}", os_hint(exc.errno)
        ) from None
    raise LogBusyError(f"{path}: kept changing while condense changed it", hint="try again")


def _settings_text(path: Path) -> str:
    """The text of a client's file ("" when there is none); ConfigError when it is not a
    regular UTF-8 file condense may replace."""
    import os

    from condense_cli.core.files import NotSmallFile, read_small

    try:
        raw = read_small(path, SETTINGS_LIMIT)
    except NotSmallFile as exc:
        raise ConfigError(f"{path}: {exc}", hint="condense changes only a regular file") from None
    except NotADirectoryError:
        raise ConfigError(f"{path}: a folder on the way is a file") from None
    if raw is None:
        return ""
    if not os.access(path, os.W_OK):
        raise ConfigError(
            f"{path}: is read-only", hint="condense will not replace a file you protected"
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{path}:{line}: is not UTF-8 text",
            hint="fix the file by hand first: condense will not rewrite settings it cannot read",
        ) from None


def _diff(path: Path, old: str, new: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), str(path), str(path)
    )
    return "".join(lines)


# --- JSON, every value as the user wrote it ------------------------------------------------


@dataclass(frozen=True)
class Number:
    """A JSON number as the file wrote it (`1e400`, `1.10`, `-0`): kept as text, so it
    is written back exactly, never turned into `Infinity` or another spelling."""

    text: str


def load_json_object(path: Path, text: str) -> dict[str, Any]:
    """The JSON object in `text` ({} for an empty file), its numbers as `Number`;
    ConfigError when it is not one."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text, parse_float=Number, parse_int=Number, parse_constant=Number)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}: is not valid JSON ({exc.msg})",
            hint="fix the file by hand first: condense will not rewrite settings it cannot read",
        ) from None
    except RecursionError:
        raise ConfigError(
            f"{path}: nests deeper than condense reads",
            hint="condense will not rewrite settings it cannot read",
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    return data


def json_text(data: dict[str, Any]) -> str:
    """`data` as the file's new text, each `Number` written as it was read (a string
    holding a lone surrogate is written as its escape)."""
    mark = secrets.token_hex(8)
    numbers: list[str] = []

    def placeholder(value: Any) -> str:
        if not isinstance(value, Number):
            raise TypeError(f"cannot write {type(value).__name__} as JSON")
        numbers.append(value.text)
        return f"{mark}:{len(numbers) - 1}"

    text = json.dumps(data, indent=2, ensure_ascii=False, default=placeholder)
    text = re.sub(rf'"{mark}:(\d+)"', lambda m: numbers[int(m.group(1))], text)
    return text.encode("utf-8", "backslashreplace").decode("utf-8") + "\n"


def json_change(
    path: Path, update: Callable[[dict[str, Any]], dict[str, Any]]
) -> Callable[[str], str]:
    """A change (for `edit_settings`) of a JSON settings file by `update`, which gets
    its object and returns the new one; the file is left as it is when nothing but
    its layout would change."""

    def change(old: str) -> str:
        data = load_json_object(path, old)
        new = update(copy.deepcopy(data))
        return old if new == data else json_text(new)

    return change


def with_json_server(
    path: Path, settings: dict[str, Any], name: str, entry: dict[str, Any] | None
) -> dict[str, Any]:
    """Claude Code's (or Gemini CLI's) settings with the MCP server `name` set to hold
    `entry`'s keys (keeping an `env` or any other key the user gave it), or removed
    when `entry` is None; the rest as it was."""
    servers = settings.get("mcpServers") or {}
    if not isinstance(servers, dict) or not isinstance(servers.get(name, {}), dict):
        raise ConfigError(f"{path}: expected 'mcpServers' to be a JSON object of servers")
    kept = servers.pop(name, None)
    if entry is not None:
        servers[name] = entry if kept is None else kept | entry
        servers[name].setdefault("env", {})
    changed = {k: v for k, v in settings.items() if k != "mcpServers"}
    if servers:
        changed["mcpServers"] = servers
    return changed


# --- TOML, through a parser that keeps the file -------------------------------------------


def toml_table_change(
    path: Path, keys: tuple[str, str], entry: dict[str, Any] | None
) -> Callable[[str], str]:
    """A change (for `edit_settings`) of a TOML file that sets the table `keys`
    (`mcp_servers`, `condense`) to hold `entry`'s keys, keeping any others the user
    added to it (an `env`), or removes it whole when `entry` is None, however the
    file spells it (`[a.b]`, `[ a."b" ]`, an inline table, dotted keys). The result
    must parse to exactly the old settings with that one change, or nothing is
    written."""

    def change(old: str) -> str:
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        before = _toml(path, old)
        group, name = keys
        servers = before.get(group, {})
        if not isinstance(servers, dict) or not isinstance(servers.get(name, {}), dict):
            raise ConfigError(
                f"{path}: expected [{group}.{name}] to be a table",
                hint="fix the file by hand first",
            )
        expected = copy.deepcopy(before)
        if entry is None:
            if name not in servers:
                return old
            del expected[group][name]
        else:
            expected.setdefault(group, {})[name] = servers.get(name, {}) | entry
            if expected == before:
                return old
        try:
            document = tomlkit.parse(old)
            if entry is None:
                del document[group][name]
            elif group not in document:
                table = tomlkit.table()
                table.update(entry)
                outer = tomlkit.table(is_super_table=True)
                outer.append(name, table)
                document.append(group, outer)
            elif name not in document[group]:
                table = tomlkit.table()
                table.update(entry)
                document[group][name] = table
            else:
                document[group][name].update(entry)
            new = tomlkit.dumps(document)
        except (TOMLKitError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(
                f"{path}: condense could not change [{group}.{name}] safely ({exc})",
                hint="make the change by hand (`condense mcp install codex --dry-run` shows it)",
            ) from None
        after = _toml(path, new)
        if _without_empty(after, group) != _without_empty(expected, group):
            raise ConfigError(
                f"{path}: condense could not change [{group}.{name}] without changing "
                "other settings; nothing was written",
                hint="make the change by hand (`condense mcp install codex --dry-run` shows it)",
            )
        return new

    return change


def _toml(path: Path, text: str) -> dict[str, Any]:
    """The settings of a TOML file as its client reads them; ConfigError when they
    do not parse (condense never writes over a file its client refuses)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path}: is not valid TOML ({exc})",
            hint="fix the file by hand first: condense will not rewrite settings it cannot read",
        ) from None
    except RecursionError:
        raise ConfigError(f"{path}: nests deeper than condense reads") from None


def _without_empty(settings: dict[str, Any], group: str) -> dict[str, Any]:
    """`settings` with `group` left out when it is an empty table (a file may keep an
    emptied `[mcp_servers]` header, or drop it)."""
    return {k: v for k, v in settings.items() if not (k == group and v == {})}
