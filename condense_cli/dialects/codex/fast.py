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
from condense_cli.dialects.codex.items import ITEM_TYPES, NEEDS, PARTS, CodexEvent, sends
from condense_cli.dialects.codex.reading import CALL_EVENTS, Reader, line_at
from condense_cli.fast.halves import decoded_blocks
from condense_cli.fast.lines import BlockDecoder, Record, lines_end

# event_msg types that change what the reader keeps (a rollback, and the events the
# calls are read from: a token count, the thread's settings)
READ_EXACTLY = frozenset({"thread_rolled_back"}) | CALL_EVENTS
LARGEST_ORDINAL = (1 << 63) - 1  # beyond it, msgspec and orjson may read a number apart


NOTHING = msgspec.Raw(b"")


class Payload(msgspec.Struct, gc=False):
    """What the history reads of a payload; other fields are skipped unbuilt."""

    type: object = None
    role: object = None
    call_id: object = None
    model: object = None
    # the other fields Codex needs to decode an item (`items.NEEDS`): only where each
    # is and how it starts are kept
    name: msgspec.Raw = NOTHING
    arguments: msgspec.Raw = NOTHING
    encrypted_function_args: msgspec.Raw = NOTHING
    input: msgspec.Raw = NOTHING
    output: msgspec.Raw = NOTHING
    summary: msgspec.Raw = NOTHING
    encrypted_content: msgspec.Raw = NOTHING
    content: msgspec.Raw = NOTHING


class Part(msgspec.Struct, gc=False):
    """A message's content part, as far as `items.PARTS` looks at it."""

    type: object = None
    text: object = None
    image_url: object = None


PARTS_DECODER = msgspec.json.Decoder(list[Part])
# `items.NEEDS` as the fast path checks it: for each item type, each field it needs,
# with the first bytes its raw JSON may start with (a string, an array), and the types
# its decoded value may have (`role`, `call_id`, which the history reads anyway).
FIRST: dict[type, set[int]] = {str: {ord('"')}, list: {ord("[")}}
CHECKS = {
    kind: tuple(
        (name, set().union(*(FIRST[t] for t in types)), types) for name, types in needs.items()
    )
    for kind, needs in NEEDS.items()
}


class Fields(msgspec.Struct, gc=False):
    type: object = None
    ordinal: object = UNSET
    payload: Payload | None = None


DECODER = BlockDecoder(Fields)


# A line's decoded fields: its `type`, `ordinal`, and its payload's `type`, `role`,
# `call_id` and `model`, as decoded (of any JSON type); None for a line whose payload
# is not an object.
LineFields = tuple[object, object, object, object, object, object]
# The share of a big rollout this process decodes when a child decodes the rest
# (`halves.decoded_blocks`). On the 100k-line bench rollout this process reads its
# half in 0.31-0.37 s, the child is done by then, and its records take 0.10-0.14 s to
# feed here (one process: 0.65-0.78 s).
PARENT_SHARE = 0.5


def fields_of(value: Fields) -> "LineFields | None":
    """What the fast path reads of a line whose decoded fields are `value`; None when
    the exact path must read it (no payload, or an item Codex may not decode)."""
    payload = value.payload
    if payload is None or (value.type == "response_item" and not decodes(payload)):
        return None
    return (value.type, value.ordinal, payload.type, payload.role, payload.call_id, payload.model)


def decodes(payload: Payload) -> bool:
    """Whether Codex surely decodes this item (`items.undecodable` says so of None)."""
    kind = payload.type
    checks = CHECKS.get(kind) if type(kind) is str else None
    if checks is None:
        return True
    for name, starts, types in checks:
        value = getattr(payload, name)
        if type(value) is msgspec.Raw:
            if not len(value):
                if name == "arguments" and len(payload.encrypted_function_args):
                    continue  # (`items.undecodable` does not judge these)
                return False
            if memoryview(value)[0] not in starts:
                return False
        elif not isinstance(value, types):
            return False
    if kind == "message":
        try:
            parts = PARTS_DECODER.decode(payload.content)
        except msgspec.MsgspecError:
            return False
        for part in parts:
            field = PARTS.get(part.type) if type(part.type) is str else None
            if field is None or type(getattr(part, field)) is not str:
                return False
    return True


def records_of(block: bytes, offset: int) -> "list[Record] | None":
    """The lines of a block of whole lines that starts at `offset` (`fields_of` each);
    None when the whole block must take the exact path."""
    return DECODER.records(block, offset, fields_of)


def read_fast(
    reader: Reader, fields: LineFields, number: int, at: "tuple[LogSource, int, int]"
) -> bool:
    """Do what `reader.read_line` would do with the line `at` (the log, from, to), from
    its decoded fields; False (and nothing done) when the exact path must read it."""
    kind, ordinal, item, role, call, model = fields
    if number == 1:
        return False
    event = None
    if kind == "response_item":
        if type(item) is not str or item not in ITEM_TYPES:
            return False
        if sends(item, role):
            event = CodexEvent(None, None, number)
            event.at, event.fast_type = at, item
            event.fast_call = call if type(call) is str else None
    elif kind == "event_msg":
        if item in READ_EXACTLY:
            return False
    elif kind != "turn_context":
        return False
    state = reader.state
    if state.paginated:
        if ordinal is UNSET:
            ordinal = None
        elif type(ordinal) is not int or not 0 <= ordinal <= LARGEST_ORDINAL:
            return False
        reader.ordinal(number, ordinal)
    if event is not None:
        state.history.append(event)
        if reader.keep_sent:
            reader.sent.append(event)
    elif kind == "turn_context" and type(model) is str:
        reader.turn_model(model)
    return True


def feed_blocks(
    reader: Reader,
    source: LogSource,
    begin: "tuple[int, int]" = (0, 0),
    split: bool = False,
    limit: "int | None" = None,
) -> "Generator[None, None, int]":
    """Feed the rollout's whole lines (up to line `limit`) to `reader` a block at a time,
    pausing (yielding) whenever it has steps or items waiting, as `rollout.feed_lines`
    does (`begin`: the offset of the first line, and the number of the lines before it;
    `split`: a big rollout is decoded in two processes). The generator's value
    (`StopIteration.value`) is the offset where the exact path goes on; `reader.lines`
    is the number of the last line read."""
    first, number = begin
    end = max(first, lines_end(source.file, source.size, limit))
    reader.lines = number
    report = source.on_progress
    share = PARENT_SHARE if split else None
    for offset, size, records, raw in decoded_blocks(source, first, end, records_of, share):
        if records is None:
            start = offset
            for line in io.BytesIO(source.read_at(offset, offset + size) if raw is None else raw):
                number += 1
                reader.lines = number
                exact(reader, source, number, line, start)
                start += len(line)
                if reader.steps or reader.sent:
                    yield
        else:
            for fields, start, stop, following in records:
                number += 1
                reader.lines = number
                if fields is None or not read_fast(reader, fields, number, (source, start, stop)):
                    line = (
                        source.read_at(start, following)
                        if raw is None
                        else raw[start - offset : following - offset]
                    )
                    exact(reader, source, number, line, start)
                    if reader.steps or reader.sent:
                        yield
            if reader.sent:  # the block's items the fast path read
                yield
        if report is not None:
            report(offset + size)
    return end


def exact(reader: Reader, source: LogSource, number: int, raw: bytes, start: int) -> None:
    """The exact path for one whole line (its newline included) starting at `start`."""
    body, at = line_at(source, number, raw, start)
    if body.strip():
        reader.read_line(number, body, at)
