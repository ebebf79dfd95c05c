"""A rollout's lines decoded by msgspec a block at a time, only as far as
`usage.Calls` reads them (the rest of each line is skipped unbuilt). Imported only
when a rollout's calls are read on their own (`cost`): msgspec's import is not paid
by a replay. This module does not use `from __future__ import annotations`: msgspec
reads the Structs' annotations as types."""

from typing import Any

import msgspec

from condense_cli.fast.lines import lines_decoded


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


def call_lines(block: bytes) -> "tuple[list[tuple[int, dict[str, Any]]] | None, int]":
    """The lines of `block` (whole lines) that `Calls` reads, each by its index in the
    block, as much of it as `Calls` reads, and how many lines the block holds; None for
    the lines where they cannot be decoded at once (`fast.lines.lines_decoded`)."""
    lines, held = lines_decoded(LINE, block)
    if lines is None:
        return None, held
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
    return taken, held
