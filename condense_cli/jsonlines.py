"""Reading one JSON object per line, for every dialect: the shared decoder and the
wording of what is wrong with a line."""

from __future__ import annotations

from typing import Any

import orjson

EXCERPT_CHARS = 60


class LineProblem(Exception):
    """A line is not a valid event; the message says what is wrong."""


def excerpt(raw: bytes, limit: int = EXCERPT_CHARS) -> str:
    """A bounded, printable excerpt of a line for error messages."""
    text = raw[: limit * 4].decode("utf-8", errors="replace")
    text = text.encode("unicode_escape").decode("ascii")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def decode_line(raw: bytes) -> dict[str, Any]:
    """Parse one line (no newline) into a JSON object, or raise LineProblem."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as uexc:
            raise LineProblem(
                f"not UTF-8 (byte 0x{raw[uexc.start]:02x} at column {uexc.start + 1})"
            ) from None
        reason, _, where = str(exc).partition(": line 1 column ")
        column = where.split(" ", 1)[0]
        at = f" at column {column}" if column.isdigit() else ""
        raise LineProblem(f"invalid JSON{at}: {reason} (line starts {excerpt(raw)!r})") from None
    if not isinstance(data, dict):
        raise LineProblem(f"expected a JSON object, got {json_type(data)}")
    return data


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
