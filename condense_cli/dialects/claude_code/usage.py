"""The model calls a Claude Code session records: every assistant line's `usage`,
each call once. The client writes a line per content block of one answer, each with
the same message id, request id and usage (the call's `key`, which a forked session's
copy keeps too); `condense run`'s copies (`condenseCopyOf`)
and the replies the client writes itself (`<synthetic>`) are no calls."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

import msgspec
import orjson

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.core.usage import Spending, Usage, count, placed
from condense_cli.dialects.claude_code.events import COPY_OF
from condense_cli.dialects.claude_code.lines import Session
from condense_cli.dialects.claude_code.resume import SYNTHETIC_MODEL


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


LINES = msgspec.json.Decoder(list[_Line])


def session_usage(session: Session) -> list[Usage]:
    """Each call of a session read, in the order it records them (the call fields its
    `stats` walk kept, when it walked the session: no line is parsed again)."""
    if session.call_lines is not None:
        return _calls(session.call_lines)
    return _calls((x.number, x.parse()) for x in session.lines if x.type == "assistant")


def call_fields(data: dict[str, Any]) -> dict[str, Any]:
    """What `_calls` reads of an assistant line (to keep of it, not the whole line)."""
    message = as_dict(data.get("message"))
    return {
        "type": data.get("type"),
        "requestId": data.get("requestId"),
        "timestamp": data.get("timestamp"),
        COPY_OF: data.get(COPY_OF),
        "message": {key: message.get(key) for key in ("id", "model", "usage")},
    }


def file_usage(source: LogSource) -> list[Usage]:
    """The same, from the file's lines, without replaying it: only the lines that
    hold a usage are parsed."""
    return _calls(_usage_lines(source))


def _usage_lines(source: LogSource) -> Iterator[tuple[int, dict[str, Any]]]:
    """The lines that may hold a call, each decoded only as far as `_calls` reads it:
    found where a `"usage"` key is (`LogSource.lines_with`), decoded by msgspec
    `DECODED_AT_ONCE` candidates at a time (it skips the content, which is most of a
    line); one by one, with orjson, where msgspec cannot take a line's shape."""
    found: list[tuple[int, bytes]] = []
    for number, line in source.lines_with((b'"usage"',)):
        if b'"assistant"' in line:
            found.append((number, line_body(line, first=number == 1)))
        if len(found) >= DECODED_AT_ONCE:
            yield from _decoded(found)
            found = []
    yield from _decoded(found)


DECODED_AT_ONCE = 2000  # candidate lines decoded by msgspec in one document


def _decoded(lines: list[tuple[int, bytes]]) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        values = LINES.decode(b"[" + b",".join(body for _, body in lines) + b"]")
    except (msgspec.ValidationError, msgspec.DecodeError):
        yield from _one_by_one(lines)
        return
    for (number, _), line in zip(lines, values, strict=True):
        message = line.message
        yield (
            number,
            {
                "type": line.type,
                "requestId": line.requestId,
                "timestamp": line.timestamp,
                COPY_OF: line.condenseCopyOf,
                "message": {"id": message.id, "model": message.model, "usage": message.usage}
                if message is not None
                else None,
            },
        )


def _one_by_one(lines: list[tuple[int, bytes]]) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, body in lines:
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            continue
        if isinstance(data, dict):
            yield number, data


def _calls(lines: Iterable[tuple[int, dict[str, Any]]]) -> list[Usage]:
    seen: set[str] = set()
    found = []
    for number, data in lines:
        if data.get("type") != "assistant" or data.get(COPY_OF):
            continue
        message = as_dict(data.get("message"))
        usage, model = message.get("usage"), message.get("model")
        if not isinstance(usage, dict) or not isinstance(model, str) or model == SYNTHETIC_MODEL:
            continue
        call, request = message.get("id"), data.get("requestId")
        key = f"{call}:{request}" if isinstance(call, str) and isinstance(request, str) else None
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        written = count(usage, "cache_creation_input_tokens")
        creation = as_dict(usage.get("cache_creation"))
        hour = min(written, count(creation, "ephemeral_1h_input_tokens"))
        stamp = data.get("timestamp")
        found.append(
            Usage(
                stamp if isinstance(stamp, str) else "",
                model,
                count(usage, "input_tokens"),
                count(usage, "output_tokens"),
                written - hour,
                hour,
                count(usage, "cache_read_input_tokens"),
                number,
                key,
            )
        )
    return found


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
