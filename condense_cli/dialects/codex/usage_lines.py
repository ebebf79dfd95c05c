"""A rollout's lines decoded by msgspec a block at a time, only as far as
`usage.Calls` reads them (the rest of each line is skipped unbuilt). Imported only
when a rollout's calls are read on their own (`cost`): msgspec's import is not paid
by a replay. This module does not use `from __future__ import annotations`: msgspec
reads the Structs' annotations as types."""

from typing import Any

import msgspec


class _Payload(msgspec.Struct, gc=False):
    type: object = None
    model: object = None
    info: object = None
    usage: object = None


class _Line(msgspec.Struct, gc=False):
    type: object = None
    timestamp: object = None
    payload: "_Payload | None" = None


LINE = msgspec.json.Decoder(_Line)
# the types of the lines `Calls` reads, besides an event_msg that is a token count
TAKEN = frozenset({"turn_context", "token_usage_record", "compacted"})


def call_lines(block: bytes, count: int) -> "list[tuple[int, dict[str, Any]]] | None":
    """The lines of `block` (`count` whole lines) that `Calls` reads, each by its index
    in the block, as much of it as `Calls` reads; None when msgspec cannot take a line
    of the block, or the block has a blank line (which would move the numbers)."""
    try:
        lines = LINE.decode_lines(block)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    if len(lines) != count:
        return None
    taken = []
    for index, line in enumerate(lines):
        kind, payload = line.type, line.payload
        if payload is None:
            continue
        if kind in TAKEN or (kind == "event_msg" and payload.type == "token_count"):
            taken.append(
                (
                    index,
                    {
                        "type": kind,
                        "timestamp": line.timestamp,
                        "payload": {
                            "type": payload.type,
                            "model": payload.model,
                            "info": payload.info,
                            "usage": payload.usage,
                        },
                    },
                )
            )
    return taken
