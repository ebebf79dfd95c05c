"""Claude Code's fast path: session lines decoded by msgspec a block at a time into
the few fields the replay reads, each line's bytes kept to be parsed when needed.

Imported only for sessions big enough to pay for msgspec's import (`fastlines`).
This module does not use `from __future__ import annotations`: msgspec reads the
Structs' annotations as types. A value of an unexpected type fails its whole block,
which then takes the exact path, like any block with a line simdjson refuses.
"""

import io
from typing import cast

import msgspec
from msgspec import UNSET

from condense_cli.core.logfile import LogSource
from condense_cli.dialects.claude_code.events import BOUNDARY
from condense_cli.dialects.claude_code.lines import (
    BOUNDARY_BIT,
    COPY_BIT,
    SPAN,
    SUMMARY_BIT,
    Line,
    Session,
    line_flags,
    line_problem,
)
from condense_cli.fast.halves import decoded_blocks
from condense_cli.fast.lines import BlockDecoder, Record


class Block(msgspec.Struct, gc=False):
    """A content block: only what pairs tool calls with their results."""

    type: object = None
    id: object = None
    tool_use_id: object = None


class Message(msgspec.Struct, gc=False):
    id: object = None
    content: str | list[Block] | None = None


class Fields(msgspec.Struct, gc=False, rename={"parent": "parentUuid"}):
    """What the replay reads of a session line; other fields are skipped unbuilt."""

    type: object = None
    uuid: object = None
    parent: object = None
    subtype: object = None
    isSidechain: object = None
    isCompactSummary: object = None
    condenseCopyOf: object = UNSET
    message: Message | None = None


DECODER = BlockDecoder(Fields)
KEPT_BITS = BOUNDARY_BIT | SUMMARY_BIT | COPY_BIT  # the lines whose bytes are kept
# The share of a big session this process reads when a child reads the rest (see
# `read_blocks`). On the 100k-line bench session this process reads its 45% in
# 0.33-0.39 s, the child is done by then, and its records take 0.12 s to add here.
PARENT_SHARE = 0.45


# What the exact path would read of a line, from its decoded fields: its `type`,
# `uuid`, `parentUuid`, `Line.flags`, message id and tool blocks (see `Line`).
LineFields = tuple[str, "str | None", "str | None", int, "str | None", tuple[object, ...]]


def fields_of(value: Fields) -> "LineFields | None":
    """What the exact path would read of a line whose decoded fields are `value`;
    None when the exact path must read it (it is bad, or a value may read differently)."""
    message = value.message
    content = message.content if message is not None else None
    if line_problem(value.type, value.uuid, value.parent, message is not None, content):
        return None
    tools: tuple[object, ...] = ()
    odd_use = False
    if type(content) is list:
        found: list[object] = []
        for block in content:
            kind = block.type
            if kind == "tool_use":
                if type(block.id) is str:
                    found += (True, block.id)
                else:
                    odd_use = True
            elif kind == "tool_result":
                call = block.tool_use_id
                if call is not None and type(call) is not str:
                    return None  # msgspec reads a 20-digit integer as orjson does not
                found += (False, call)
        tools = tuple(found)
    kind, uuid, parent = value.type, value.uuid, value.parent
    message_id = message.id if message is not None else None
    flags = line_flags(
        kind == "system" and value.subtype == BOUNDARY,
        value.isSidechain is True,
        value.isCompactSummary is True,
        value.condenseCopyOf is not UNSET,
        odd_use,
    )
    return (
        cast(str, kind),  # line_problem refused any other type
        uuid if type(uuid) is str else None,
        parent if type(parent) is str else None,
        flags,
        message_id if type(message_id) is str else None,
        tools,
    )


def records_of(block: bytes, offset: int) -> "list[Record] | None":
    """The lines of a block of whole lines that starts at `offset` (`fields_of` each);
    None when the whole block must take the exact path."""
    return DECODER.records(block, offset, fields_of)


def _place(
    session: Session,
    source: LogSource,
    collect: bool,
    number: int,
    block: "tuple[int, int, list[Record] | None]",
    raw: bytes | None = None,
) -> int:
    """Add the lines of a block (its offset, size and records; `raw`: its bytes, read
    from the log when not given and needed) after line `number`; the last line's number."""
    offset, size, records = block
    before = session.size
    if records is None:
        for line_raw in io.BytesIO(source.read_at(offset, offset + size) if raw is None else raw):
            number += 1
            session.read(number, line_raw, collect)
        return number
    for fields, start, stop, following in records:
        number += 1
        if fields is None:
            session.read(number, source.read_at(start, following), collect)
            continue
        kind, uuid, parent, flags, message_id, tools = fields
        if flags & KEPT_BITS:  # boundaries, summaries, copies: few, and read once the
            line_raw = source.read_at(start, stop)  # log is closed (`run` prints them)
            line = Line(
                number, line_raw, None, kind, uuid, parent, None, 0, flags, message_id, tools
            )
        else:
            span = start * SPAN + stop - start
            line = Line(
                number, None, None, kind, uuid, parent, source, span, flags, message_id, tools
            )
        session.add(line)
    session.size = before + size
    return number


def read_blocks(session: Session, source: LogSource, collect: bool, end: int) -> "tuple[int, int]":
    """Read the session's whole lines before `end` (`lines_end`) into `session` a block
    at a time; return the number of the last line read and `end`, where the exact path
    goes on.

    A big session is decoded in two processes (`halves.decoded_blocks`): decoding
    (simdjson, msgspec) is most of a read, and this process, which makes every line,
    decodes the first `PARENT_SHARE` of it."""
    number = 0
    report = source.on_progress
    for offset, size, records, raw in decoded_blocks(source, 0, end, records_of, PARENT_SHARE):
        number = _place(session, source, collect, number, (offset, size, records), raw)
        if report is not None:
            report(offset + size)
    return number, end
