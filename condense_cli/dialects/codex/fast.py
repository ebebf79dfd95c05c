"""Codex's fast path: rollout lines decoded by msgspec a block at a time into the few
fields the history needs, an item keeping where its line is instead of its payload.

Only the lines that make up most of a rollout take it: a response item, an
`event_msg` that does not change the history, a `turn_context`. Every other line
(the first, `session_meta`, `compacted`, a rollback, a token count, a request, an
unknown type, a line with a problem) goes to the exact path (`Reader.read_line`),
which is what decides. Imported only for rollouts big enough to pay for msgspec's
import. This module does not use `from __future__ import annotations`: msgspec reads
the Structs' annotations as types.
"""

import io
from collections.abc import Generator

import msgspec
from msgspec import UNSET

from condense_cli.core.logfile import LogSource
from condense_cli.dialects.codex.items import ITEM_TYPES, CodexEvent, sends
from condense_cli.dialects.codex.reading import Reader, line_at
from condense_cli.fast.lines import BlockDecoder, lines_end
from condense_cli.fast.lines import read_blocks as file_blocks

# event_msg types that change what the reader keeps (a rollback, a token count)
READ_EXACTLY = frozenset({"thread_rolled_back", "token_count"})
LARGEST_ORDINAL = (1 << 63) - 1  # beyond it, msgspec and orjson may read a number apart


class Payload(msgspec.Struct, gc=False):
    """What the history reads of a payload; other fields are skipped unbuilt."""

    type: object = None
    role: object = None
    call_id: object = None
    model: object = None


class Fields(msgspec.Struct, gc=False):
    type: object = None
    ordinal: object = UNSET
    payload: Payload | None = None


DECODER = BlockDecoder(Fields)


def read_fast(reader: Reader, value: Fields, number: int, at: "tuple[LogSource, int, int]") -> bool:
    """Do what `reader.read_line` would do with the line `at` (the log, from, to), from
    its decoded fields; False (and nothing done) when the exact path must read it."""
    kind, payload = value.type, value.payload
    if payload is None or number == 1:
        return False
    event = None
    if kind == "response_item":
        item = payload.type
        if type(item) is not str or item not in ITEM_TYPES or reader.keep_sent:
            return False
        if sends(item, payload.role):
            event = CodexEvent(None, None, number)
            event.at, event.fast_type = at, item
            call = payload.call_id
            event.fast_call = call if type(call) is str else None
    elif kind == "event_msg":
        if payload.type in READ_EXACTLY:
            return False
    elif kind != "turn_context":
        return False
    state = reader.state
    if state.paginated:
        ordinal = value.ordinal
        if ordinal is UNSET:
            ordinal = None
        elif type(ordinal) is not int or not 0 <= ordinal <= LARGEST_ORDINAL:
            return False
        reader.ordinal(number, ordinal)
    if event is not None:
        state.history.append(event)
    elif kind == "turn_context" and type(payload.model) is str:
        state.model = payload.model
    return True


def feed_blocks(
    reader: Reader, source: LogSource, begin: "tuple[int, int]" = (0, 0)
) -> "Generator[None, None, int]":
    """Feed the rollout's whole lines to `reader` a block at a time, pausing (yielding)
    whenever it has steps or items waiting, as `rollout.feed_lines` does (`begin`: the
    offset of the first line, and the number of the lines before it). The generator's
    value (`StopIteration.value`) is the offset where the exact path goes on;
    `reader.lines` is the number of the last line read."""
    first, number = begin
    end = max(first, lines_end(source.file, source.size))
    reader.lines = number
    report = source.on_progress
    for offset, block in file_blocks(source.file, first, end):
        decoded = DECODER.decode(block)
        start = offset
        if decoded is None:
            for raw in io.BytesIO(block):
                number += 1
                reader.lines = number
                exact(reader, source, number, raw, start)
                start += len(raw)
                if reader.steps or reader.sent:
                    yield
        else:
            values, lines = decoded
            for value, raw in zip(values, lines, strict=True):
                number += 1
                reader.lines = number
                stop = start + len(raw) - raw.endswith(b"\r")  # a CR is not the line's
                if not read_fast(reader, value, number, (source, start, stop)):
                    exact(reader, source, number, raw + b"\n", start)
                    if reader.steps or reader.sent:
                        yield
                start += len(raw) + 1
        if report is not None:
            report(offset + len(block))
    return end


def exact(reader: Reader, source: LogSource, number: int, raw: bytes, start: int) -> None:
    """The exact path for one whole line (its newline included) starting at `start`."""
    body, at = line_at(source, number, raw, start)
    if body.strip():
        reader.read_line(number, body, at)
