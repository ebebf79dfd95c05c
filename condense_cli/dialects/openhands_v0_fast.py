"""The V0 scan's fast path: which lines are ordinary events, told without building
them. simdjson validates each line, msgspec reads the five fields the scan needs."""

from __future__ import annotations

from typing import Any

import msgspec
import simdjson
from msgspec import UNSET, UnsetType

from condense_cli.dialects.openhands_v0 import SPECIAL_ACTIONS, SPECIAL_OBSERVATIONS


class _Fields(msgspec.Struct):
    """What the scan needs of an event's `args` or `extras`."""

    hidden: Any = None


class _Head(msgspec.Struct):
    """What the scan needs of a line; msgspec skips every other field unbuilt."""

    id: Any = UNSET
    action: Any = UNSET
    observation: Any = UNSET
    args: _Fields | UnsetType | None = UNSET
    extras: _Fields | UnsetType | None = UNSET


_validate = simdjson.Parser().parse  # the result is dropped: the parse is the check
_decode_head = msgspec.json.Decoder(_Head).decode
FAST_LINE_MAX = 1 << 20  # longer lines go to the full validator (simdjson's tape grows)


def ordinary_id(raw: bytes) -> int | None:
    """The id of the event on line `raw` when it is an ordinary one, which the scan
    only records by id and offset; None for every other line, which the full
    validator then reads.

    Ordinary: a JSON object with an integer id and exactly one of action/observation,
    a string whose type is not special, and not hidden (`hidden` sits in args for
    actions, extras for observations). simdjson checks the whole line (syntax, UTF-8,
    numbers that overflow, depth) and accepts no line that orjson refuses but one
    behind a byte-order mark, which msgspec refuses; a line either doubts gets None.
    msgspec reads the five fields, unescaping keys and keeping the last of duplicate
    keys, as orjson does. tests/test_fast_scan.py holds the lines where they differ.
    """
    if len(raw) > FAST_LINE_MAX:
        return None
    try:
        _validate(raw)
        head = _decode_head(raw)
    except (ValueError, RuntimeError):
        return None
    event_id = head.id
    if type(event_id) is not int:
        return None
    kind = head.action
    if kind is not UNSET:
        if type(kind) is not str or kind in SPECIAL_ACTIONS or head.observation is not UNSET:
            return None
        fields = head.args
    else:
        kind = head.observation
        if type(kind) is not str or kind in SPECIAL_OBSERVATIONS:
            return None
        fields = head.extras
    if type(fields) is _Fields and fields.hidden is True:
        return None
    return event_id
