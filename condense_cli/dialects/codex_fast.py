"""Codex's fast path: rollout lines decoded by msgspec a block at a time into the
few fields the replay reads; response items keep their line's bytes, parsed when
their content is needed.

Imported only for rollouts big enough to pay for msgspec's import (`fastlines`).
This module does not use `from __future__ import annotations`: msgspec reads the
Structs' annotations as types. A payload that is not an object fails its whole
block, which then takes the exact path, like any block `fastlines` doubts.
"""

import io

import msgspec

from condense_cli.dialects.codex import CALLS, ITEM_TYPES, OUTPUTS, CodexEvent, _Reader, is_sent
from condense_cli.dialects.fast_blocks import Decoder
from condense_cli.fastlines import lines_end
from condense_cli.fastlines import read_blocks as file_blocks
from condense_cli.log import LogSource

# Lines with an object payload that the replay does not read further.
PASSIVE = frozenset({"session_meta", "turn_context", "world_state", "token_usage_record"})
# Events the replay reads (`_Reader.event`): they take the exact path.
READ_EVENTS = ("thread_rolled_back", "token_count")
CALLS_AND_OUTPUTS = CALLS | OUTPUTS


class Payload(msgspec.Struct, gc=False):
    type: object = None
    role: object = None
    call_id: object = None


class Fields(msgspec.Struct, gc=False):
    """What the replay reads of a rollout line; other fields are skipped unbuilt."""

    type: object = None
    payload: Payload | None = None


DECODER = Decoder(Fields)


def read_blocks(reader: _Reader, source: LogSource) -> tuple[int, int]:
    """Read the rollout's whole lines into `reader` a block at a time; return the
    number of the last line read and the offset where the exact path goes on.

    A response item of a known type is recorded here (with its bytes), and lines
    the replay only skips are skipped; every other line (compactions, requests,
    rollbacks, token counts, anything doubtful or wrong) goes to `reader.take`.
    """
    end = lines_end(source.file, source.size)
    number = 0
    history = reader.state.history
    report = source.on_progress
    for offset, block in file_blocks(source.file, 0, end):
        decoded = DECODER.decode(block)
        if decoded is None:
            for raw in io.BytesIO(block):
                number += 1
                reader.take(number, raw)
            history = reader.state.history
            if report is not None:
                report(offset + len(block))
            continue
        values, starts, doubtful = decoded
        for index, value in enumerate(values):
            number += 1
            kind, payload = value.type, value.payload
            ordinary = type(kind) is str and payload is not None
            if ordinary and (not doubtful or index not in doubtful):
                if kind == "response_item":
                    item = payload.type
                    if type(item) is str and item in ITEM_TYPES:
                        if is_sent(item, payload.role):
                            start, stop = starts[index], starts[index + 1] - 1
                            if block[stop - 1] == 13:  # a CR before the newline
                                stop -= 1
                            call = payload.call_id if item in CALLS_AND_OUTPUTS else None
                            event = CodexEvent(
                                None, block[start:stop], number, kind=item, call=call
                            )
                            history.append(event)
                        continue
                elif kind in PASSIVE or (kind == "event_msg" and payload.type not in READ_EVENTS):
                    continue
            reader.take(number, block[starts[index] : starts[index + 1]])
            history = reader.state.history  # a compaction or a rollback replaces it
        if report is not None:
            report(offset + len(block))
    return number, end
