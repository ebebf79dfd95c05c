"""The model calls a Claude Code session records: every assistant line's `usage`,
each call once. The client writes a line per content block of one answer, each with
the same message id and request id (the call's `key`, which a forked session's copy
keeps too). Today every line holds the answer's whole usage; the versions of early
2026 wrote the usage as the answer streamed, its output so far, so a call is its line
with the most tokens (the first of equals). `condense run`'s copies
(`condenseCopyOf`) and the replies the client writes itself (`<synthetic>`) are no
calls."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import msgspec
import orjson

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import LogSource, line_body, lines_in
from condense_cli.core.usage import Spending, Usage, count, placed
from condense_cli.dialects.claude_code.events import COPY_OF
from condense_cli.dialects.claude_code.lines import Session
from condense_cli.dialects.claude_code.resume import SYNTHETIC_MODEL
from condense_cli.fast.lines import lines_decoded


class _Message(msgspec.Struct, gc=False):
    id: object = None
    model: object = None
    usage: object = None


class _Line(msgspec.Struct, gc=False):
    type: object = None
    requestId: object = None
    timestamp: object = None
    condenseCopyOf: object = None
    message: _Message | None = None


LINE = msgspec.json.Decoder(_Line)


# What `_calls` reads of an assistant line: its type, request id, timestamp, the
# original it copies (`condenseCopyOf`), and its message's id, model and usage.
Fields = tuple[Any, Any, Any, Any, Any, Any, Any]


def session_usage(session: Session) -> list[Usage]:
    """Each call of a session read, in the order it records them (the call fields its
    `stats` walk kept, when it walked the session: no line is parsed again)."""
    if session.call_lines is not None:
        return _calls(session.call_lines)
    lines = session.lines
    return _calls((x.number, call_fields(x.parse())) for x in lines if x.type == "assistant")


def call_fields(data: dict[str, Any]) -> Fields:
    """What `_calls` reads of an assistant line (to keep of it, not the whole line)."""
    message = as_dict(data.get("message"))
    return (
        data.get("type"),
        data.get("requestId"),
        data.get("timestamp"),
        data.get(COPY_OF),
        message.get("id"),
        message.get("model"),
        message.get("usage"),
    )


def file_usage(source: LogSource) -> list[Usage]:
    """The same, from the file's lines, without replaying it: only the lines that
    hold a usage are parsed."""
    return _calls(_usage_lines(source))


def _usage_lines(source: LogSource) -> Iterator[tuple[int, Fields]]:
    """The assistant lines, each decoded only as far as `_calls` reads it: a block of
    whole lines at a time by msgspec (it skips the content, which is most of a line);
    where a block holds a line msgspec cannot take (or a blank one, which would move
    the numbers), its lines that hold a `"usage"` key, one by one."""
    number = 1
    for block in source.blocks():
        lines, held = lines_decoded(LINE, block)
        if lines is not None:
            for index, line in enumerate(lines):
                if line.type == "assistant" and line.message is not None:
                    yield number + index, _fields(line, line.message)
        else:
            found, _ = lines_in(block, (b'"usage"',), number)
            yield from _one_by_one([(n, line_body(x, first=n == 1)) for n, x in found])
        number += held


def _fields(line: _Line, message: _Message) -> Fields:
    return (
        line.type,
        line.requestId,
        line.timestamp,
        line.condenseCopyOf,
        message.id,
        message.model,
        message.usage,
    )


def _one_by_one(lines: list[tuple[int, bytes]]) -> Iterator[tuple[int, Fields]]:
    for number, body in lines:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict):
            yield number, call_fields(data)


def _calls(lines: Iterable[tuple[int, Fields]]) -> list[Usage]:
    # each call's line so far: its number, time, model, usage and key, and its tokens
    # (None until a later line of the same answer asks)
    chosen: list[tuple[int, Any, str, dict[str, Any], str | None, int | None]] = []
    placed_at: dict[str, int] = {}  # a call's key: where in `chosen` it is
    for number, (kind, request, stamp, copy, call, model, usage) in lines:
        if kind != "assistant" or copy or not isinstance(usage, dict):
            continue
        if not isinstance(model, str) or model == SYNTHETIC_MODEL:
            continue
        key = _key(call, request)
        at = placed_at.get(key) if key is not None else None
        if at is None:
            if key is not None:
                placed_at[key] = len(chosen)
            chosen.append((number, stamp, model, usage, key, None))
            continue
        line = chosen[at]  # another line of the same answer
        if usage == line[3]:
            continue  # (today's client repeats the whole usage on each)
        tokens, before = _tokens(usage), line[5] if line[5] is not None else _tokens(line[3])
        if tokens > before:  # a later snapshot of a streamed answer
            chosen[at] = (number, stamp, model, usage, key, tokens)
        else:
            chosen[at] = (*line[:5], before)
    return [
        _call(number, stamp, model, usage, key) for number, stamp, model, usage, key, _ in chosen
    ]


def _tokens(usage: dict[str, Any]) -> int:
    """The tokens of the call `usage` records, as its `Usage.tokens`."""
    return (
        count(usage, "input_tokens")
        + count(usage, "output_tokens")
        + count(usage, "cache_creation_input_tokens")
        + count(usage, "cache_read_input_tokens")
    )


def _call(number: int, stamp: Any, model: str, usage: dict[str, Any], key: str | None) -> Usage:
    """The call an assistant line's `usage` records."""
    written = count(usage, "cache_creation_input_tokens")
    creation = usage.get("cache_creation")
    hour = (
        min(written, count(creation, "ephemeral_1h_input_tokens"))
        if isinstance(creation, dict)
        else 0
    )
    return Usage(
        stamp if isinstance(stamp, str) else "",
        model,
        count(usage, "input_tokens"),
        count(usage, "output_tokens"),
        written - hour,
        hour,
        count(usage, "cache_read_input_tokens"),
        number,
        key,
        served=served(usage),
        searches=count(as_dict(usage.get("server_tool_use")), "web_search_requests"),
    )


def served(usage: dict[str, Any]) -> str:
    """How the API served the call where its price moves (`Usage.served`): in fast mode
    (`speed`), and in one geography only (`inference_geo`, such as `us`)."""
    words = ["fast"] if usage.get("speed") == "fast" else []
    geo = usage.get("inference_geo")
    geo = geo.strip().lower() if isinstance(geo, str) else ""
    if geo.isidentifier() and geo not in ("global", "not_available"):
        words.append(geo)
    return " ".join(words)


def _key(call: Any, request: Any) -> str | None:
    """What names one call across its lines (and a forked session's copies of them):
    its message id and request id; the message id alone where the line has no
    request id (a gateway other than Anthropic's API writes none)."""
    if not isinstance(call, str):
        return None
    return f"{call}:{request}" if isinstance(request, str) else call


def session_spending(session: Session) -> Spending:
    """The session's calls and its compactions among them. The client does not record
    a compaction's own call; its parts are built from what the boundary says
    (`compactMetadata`): the context it read (`preTokens`, from the prompt cache, which
    the call shares with the session's) and the summary it wrote (`postTokens`), on the
    model of the call before it. A compaction `condense run` wrote has no such call."""
    calls = session_usage(session)
    own = {}
    for boundary in (line for line in session.lines if line.is_boundary):
        meta = as_dict(boundary.data.get("compactMetadata"))
        read, wrote = count(meta, "preTokens"), count(meta, "postTokens")
        model = next((c.model for c in reversed(calls) if (c.line or 0) < boundary.number), "")
        if read and model and "condense" not in meta:
            stamp = boundary.data.get("timestamp")
            when = stamp if isinstance(stamp, str) else ""
            own[boundary.number] = Usage(when, model, output=wrote, cache_read=read)
    lines = [line.number for line in session.lines if line.is_boundary]
    spending = placed(calls, lines, own)
    estimated = [replace(c, estimated=c.call is not None) for c in spending.compactions]
    return Spending(spending.calls, estimated)
