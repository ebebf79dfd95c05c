"""The agent's own settings file, given with `--client-config`, read as it is.

Each dialect takes from it what its client reads: Claude Code a `settings.json`
(`autoCompactWindow`, and `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`,
`CLAUDE_CODE_AUTO_COMPACT_WINDOW`, `DISABLE_AUTO_COMPACT` in its `env`), Codex a
`config.toml` (`model_auto_compact_token_limit`, `model_context_window`), OpenHands a
`config.toml` whose `[condenser]` has `max_size` (V0, or V1 where it replaces what
`base_state.json` records). Here it is only read: JSON by its `.json` name, TOML else.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.errors import ConfigError


@dataclass(frozen=True)
class ClientConfig:
    """A client's settings file: where it is and what it holds."""

    path: str
    data: dict[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> dict[str, Any]:
        """A table (`[condenser]`, a JSON object) of the file, or {}."""
        value = self.data.get(name)
        return value if isinstance(value, dict) else {}

    def number(self, value: Any, what: str, least: int = 1) -> int | None:
        """`value` as a whole number of at least `least` (a string of digits counts,
        as in an `env` table), None when absent; ConfigError when it is something else."""
        if value is None:
            return None
        number = whole_number(value)
        if number is None or number < least:
            raise ConfigError(
                f"{self.path}: {what} must be a whole number of at least {least:,} (got {value!r})",
                hint="fix the client's settings file, or leave --client-config out",
            )
        return number


def whole_number(value: Any) -> int | None:
    """`value` as a whole number: an integer, or a string of ASCII digits (as an `env`
    table holds one; `"²"` is not one); None for anything else."""
    if isinstance(value, str):
        text = value.strip()
        return int(text) if text.isascii() and text.isdigit() else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


MAX_SETTINGS_BYTES = 16 << 20  # a client's settings file is a few kilobytes


def read_client_config(path: str) -> ClientConfig:
    """The settings file at `path`: a regular file of at most `MAX_SETTINGS_BYTES`
    (a FIFO or a device is refused, never read); ConfigError (exit 2) otherwise."""
    from condense_cli.core.files import NotSmallFile, read_small

    try:
        raw = read_small(Path(path), MAX_SETTINGS_BYTES)
    except NotSmallFile as exc:
        raise ConfigError(
            f"{path}: {exc}", hint="give --client-config the agent's settings.json or config.toml"
        ) from None
    if raw is None:
        raise ConfigError(
            f"{path}: no such file",
            hint="give --client-config the agent's settings.json or config.toml",
        )
    as_json = path.endswith(".json")
    try:
        data: Any = orjson.loads(raw) if as_json else tomllib.loads(raw.decode("utf-8"))
    except RecursionError:
        raise ConfigError(f"{path}: nests deeper than condense reads") from None
    except (orjson.JSONDecodeError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        kind = "JSON" if as_json else "TOML"
        raise ConfigError(
            f"{path}: is not valid {kind}: {exc}",
            hint="give --client-config the agent's settings.json or config.toml",
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object of settings")
    return ClientConfig(path, data)
