"""The model calls a Gemini CLI session records: each model message's `tokens`, once
by its id (the client writes a message again, whole, when it has its tool calls, and
again when a resumed run writes the list back; a `$set` list is no new call).
`input` holds the cached tokens, which are read from the cache; `thoughts` are billed
as output and `tool` (what tool use added to the prompt) as input."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import BOM, LogSource, line_body
from condense_cli.core.usage import Usage, count
from condense_cli.dialects.gemini_cli.session import is_document


def session_usage(source: LogSource) -> list[Usage]:
    """Each call of the session, by its message's first place in the file."""
    calls: dict[str, Usage] = {}
    for number, message in _messages(source):
        tokens = as_dict(message.get("tokens"))
        model = message.get("model")
        if message.get("type") != "gemini" or not tokens or not isinstance(model, str):
            continue
        cached = count(tokens, "cached")
        stamp = message.get("timestamp")
        call = Usage(
            stamp if isinstance(stamp, str) else "",
            model,
            max(0, count(tokens, "input") - cached) + count(tokens, "tool"),
            count(tokens, "output") + count(tokens, "thoughts"),
            cache_read=cached,
            line=number,
        )
        first = calls.get(message["id"])
        calls[message["id"]] = call if first is None else replace(call, line=first.line)
    return list(calls.values())


def _messages(source: LogSource) -> list[tuple[int, dict[str, Any]]]:
    """The message records of the file (lines), or the messages of its one document."""
    if is_document(source):  # a 2025 release's one JSON document
        try:
            document = orjson.loads(source.read_at(0, source.size).removeprefix(BOM))
        except orjson.JSONDecodeError:
            return []
        listed = as_dict(document).get("messages")
        return [(1, m) for m in listed or [] if _message(m)]
    found = []
    for number, raw in enumerate(source.raw_lines(), start=1):
        if b'"tokens"' not in raw:
            continue
        try:
            record = orjson.loads(line_body(raw, first=number == 1))
        except orjson.JSONDecodeError:
            continue
        if _message(record):
            found.append((number, record))
    return found


def _message(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and "$set" not in value
