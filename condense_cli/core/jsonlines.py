"""Reading one JSON object per line, for every dialect: the shared decoder and the
wording of what is wrong with a line; and writing JSON as orjson does, a big list
item by item."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
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


def decode_line(raw: bytes, quote: bool = True) -> dict[str, Any]:
    """Parse one line (no newline) into a JSON object, or raise LineProblem, which
    quotes the start of a line that is not JSON when `quote` (never the first line of
    a file: nothing has shown it is a session log, and it may be `/etc/shadow`)."""
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
        starts = f" (line starts {excerpt(raw)!r})" if quote else ""
        raise LineProblem(f"invalid JSON{at}: {reason}{starts}") from None
    if not isinstance(data, dict):
        raise LineProblem(f"expected a JSON object, got {json_type(data)}")
    return data


# orjson.loads reads objects nested up to 1,024 deep, but orjson.dumps stops at 255.
FALLBACK_RECURSION_LIMIT = 5000


def encode(value: Any, *, indent: bool = False) -> bytes:
    """`value` (parsed from a log, or built here) as JSON bytes, as orjson writes it.

    A value nested deeper than orjson.dumps goes (a tool's arguments can be) is
    written by the standard library instead, with the same separators; only the
    spelling of some floats (`1e+16` for `1e16`) can differ there.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else None)
    except orjson.JSONEncodeError as exc:
        if "Recursion limit" not in str(exc):
            raise
    import json  # only here: start-up stays lean

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, FALLBACK_RECURSION_LIMIT))
    try:
        if indent:
            text = json.dumps(value, ensure_ascii=False, indent=2)
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    finally:
        sys.setrecursionlimit(limit)
    return text.encode("utf-8")


class Items:
    """A list in a document that `indented` writes item by item, as each is made:
    the items are never all in memory, nor is the document."""

    def __init__(self, items: Iterable[Any]) -> None:
        self.items = items


def indented(value: Any, depth: int = 0) -> Iterator[bytes]:
    """`value` as `encode(value, indent=True)` writes it, byte for byte, in pieces: a
    dict is opened key by key when an `Items` is among its values (at any depth), and
    an `Items` list item by item. (A string in JSON holds no raw newline, so a piece
    written alone is indented by the lines it starts.)"""
    pad = b"\n" + b"  " * depth
    if isinstance(value, list) and _streams(value):
        value = Items(value)
    if isinstance(value, Items):
        opened = False
        for item in value.items:
            yield (b",\n  " if opened else b"[\n  ") + pad[1:]
            opened = True
            yield from indented(item, depth + 1)
        yield pad + b"]" if opened else b"[]"
    elif isinstance(value, dict) and value and _streams(value):
        opener = b"{"
        for key, item in value.items():
            yield opener + pad + b"  " + encode(key) + b": "
            opener = b","
            yield from indented(item, depth + 1)
        yield pad + b"}"
    else:
        yield encode(value, indent=True).replace(b"\n", pad)


def _streams(value: Any) -> bool:
    """Whether an `Items` is in `value` (a dict's values, a list's items, at any depth)."""
    if isinstance(value, Items):
        return True
    if isinstance(value, dict):
        return any(_streams(item) for item in value.values())
    if isinstance(value, list):
        return any(_streams(item) for item in value)
    return False


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


def as_str(value: Any) -> str:
    """A parsed value that should be a string, or "" when the log holds something else."""
    return value if isinstance(value, str) else ""


def as_dict(value: Any) -> dict[str, Any]:
    """A parsed value that should be an object, or {} when the log holds something else."""
    return value if isinstance(value, dict) else {}
