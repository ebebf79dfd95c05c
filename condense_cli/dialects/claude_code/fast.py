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
    SUMMARY_BIT,
    Line,
    Session,
    line_problem,
)
from condense_cli.fast.lines import BlockDecoder, lines_end
from condense_cli.fast.lines import read_blocks as file_blocks


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


def line_of(value: Fields, number: int, at: "tuple[LogSource, int, int]") -> "Line | None":
    """The line the exact path would make of the bytes `at` (the log, from, to), from
    their decoded fields; None when the exact path must read it (it is bad, or a value
    may read differently)."""
    message = value.message
    content = message.content if message is not None else None
    if line_problem(value.type, value.uuid, value.parent, message is not None, content):
        return None
    tools: tuple[object, ...] = ()
    if type(content) is list:
        found: list[object] = []
        for block in content:
            kind = block.type
            if kind == "tool_use":
                if type(block.id) is str:
                    found += (True, block.id)
            elif kind == "tool_result":
                call = block.tool_use_id
                if call is not None and type(call) is not str:
                    return None  # msgspec reads a 20-digit integer as orjson does not
                found += (False, call)
        tools = tuple(found)
    kind, uuid, parent = value.type, value.uuid, value.parent
    message_id = message.id if message is not None else None
    return Line(
        number,
        None,
        None,
        cast(str, kind),  # line_problem refused any other type
        uuid if type(uuid) is str else None,
        parent if type(parent) is str else None,
        at=at,
        boundary=kind == "system" and value.subtype == BOUNDARY,
        sidechain=value.isSidechain is True,
        compact_summary=value.isCompactSummary is True,
        copy=value.condenseCopyOf is not UNSET,
        message_id=message_id if type(message_id) is str else None,
        tools=tools,
    )


def read_blocks(session: Session, source: LogSource, collect: bool) -> "tuple[int, int]":
    """Read the session's whole lines into `session` a block at a time; return the
    number of the last line read and the offset where the exact path goes on."""
    end = lines_end(source.file, source.size)
    number = 0
    report = source.on_progress
    for offset, block in file_blocks(source.file, 0, end):
        decoded = DECODER.decode(block)
        if decoded is None:
            for raw in io.BytesIO(block):
                number += 1
                session.read(number, raw, collect)
        else:
            values, lines = decoded
            start = offset
            for value, raw in zip(values, lines, strict=True):
                number += 1
                stop = start + len(raw) - raw.endswith(b"\r")  # a CR is not the line's
                line = line_of(value, number, (source, start, stop))
                if line is None:
                    session.read(number, raw + b"\n", collect)
                else:
                    if line.flags & KEPT_BITS:  # boundaries, summaries, copies: few, and
                        line.keep(raw[: stop - start])  # read once the log is closed (the
                        # condensations `run` prints)
                    session.size += len(raw) + 1
                    session.add(line)
                start += len(raw) + 1
        if report is not None:
            report(offset + len(block))
    return number, end
