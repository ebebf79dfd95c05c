"""TOML tables <-> config dataclasses, and the model settings every LLM condenser takes.

Config classes (one per condenser type, and `LLMSettings`) are frozen dataclasses
with a `validate` method; `parse_table` builds one from a TOML table, rejecting
unknown keys and wrong types with a message that names the key.
"""

from __future__ import annotations

import types
from dataclasses import fields
from typing import Any, ClassVar, Protocol, TypeVar, Union, get_args, get_origin, get_type_hints

from condense_cli.core.errors import ConfigError
from condense_cli.core.jsonlines import json_type
from condense_cli.core.text import quote


class Checked(Protocol):
    """A config dataclass: its fields are a table's keys; `validate` checks values together."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def validate(self) -> None: ...


T = TypeVar("T", bound=Checked)


def settings_table(settings: Any) -> dict[str, Any]:
    """A config dataclass as a TOML table, without nulls (secrets still in clear)."""
    table: dict[str, Any] = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if value is None or value == {}:
            continue
        table[f.name] = value
    return table


def parse_table(cls: type[T], table: dict[str, Any], where: str, label: str = "") -> T:
    """Build config dataclass `cls` from a TOML table, checking keys and types."""
    hints = get_type_hints(cls)
    names = [f.name for f in fields(cls)]
    for key, value in table.items():
        if key not in hints:
            valid = ", ".join(names) if names else "none"
            raise ConfigError(f"[{where}] unknown key {quote(key)}{label}; valid keys: {valid}")
        expected = hints[key]
        if not _matches(value, expected):
            raise ConfigError(
                f"[{where}] {key} must be {_describe(expected)}, not {describe_value(value)}"
            )
    try:
        instance = cls(**table)
        instance.validate()
    except ConfigError as exc:
        raise ConfigError(f"[{where}] {exc.message}", exc.hint) from None
    return instance


def _matches(value: Any, hint: Any) -> bool:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_matches(value, arg) for arg in get_args(hint))
    if hint is Any:
        return True
    if hint is type(None):
        return value is None
    if origin is dict:
        value_hint = get_args(hint)[1]
        return isinstance(value, dict) and all(_matches(v, value_hint) for v in value.values())
    if origin is not None:
        return isinstance(value, origin)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(a) for a in get_args(hint) if a is not type(None))
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    if hint in names:
        return names[hint]
    if (origin or hint) is list:
        return "an array of tables"
    if (origin or hint) is dict:
        args = get_args(hint)
        return f"a table of {_describe(args[1]).split(' ', 1)[1]}s" if args else "a table"
    return str(hint)


def describe_value(value: Any) -> str:
    """How a message names a TOML value: `a table`, `a string`, ..."""
    return "a table" if isinstance(value, dict) else json_type(value)
