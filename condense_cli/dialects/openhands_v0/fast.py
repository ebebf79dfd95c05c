"""The V0 scan's fast path: which lines are ordinary events, told without building
them. simdjson validates each line, msgspec reads the five fields the scan needs.

`sort_batch` judges a batch of lines with C loops (`map` over the whole batch), so
that Python runs once per batch and once per line that is not ordinary; a batch
either library doubts is judged line by line by `ordinary_id`, which holds the
same rule.
"""

from __future__ import annotations

from array import array
from collections import deque
from itertools import accumulate, compress, islice
from operator import attrgetter, lt
from typing import Any

import msgspec
import simdjson
from msgspec import UNSET, UnsetType

from condense_cli.dialects.openhands_v0.events import SPECIAL_ACTIONS, SPECIAL_OBSERVATIONS
from condense_cli.dialects.openhands_v0.sorting import Classified, classify_lines


class _Fields(msgspec.Struct, frozen=True, gc=False):
    """What the scan needs of an event's `args` or `extras`."""

    hidden: Any = None


_NO_FIELDS = _Fields()


class _Head(msgspec.Struct, gc=False):
    """What the scan needs of a line; msgspec skips every other field unbuilt. A
    line whose fields have other types (`args` that is not an object, say) is
    refused, and goes to the full validator."""

    id: int | UnsetType = UNSET
    action: str | UnsetType = UNSET
    observation: str | UnsetType = UNSET
    args: _Fields = _NO_FIELDS
    extras: _Fields = _NO_FIELDS


# action, observation, and the `hidden` of args and of extras: hashable, and few
Shape = tuple[Any, Any, Any, Any]

_validate = simdjson.Parser().parse  # the result is dropped: the parse is the check
_decode_head = msgspec.json.Decoder(_Head).decode
_shape = attrgetter("action", "observation", "args.hidden", "extras.hidden")
_id = attrgetter("id")
FAST_LINE_MAX = 1 << 20  # longer lines go to the full validator (simdjson's tape grows)
SHAPES_MAX = 4096  # distinct shapes remembered; more (a strange log) start afresh


def is_ordinary(shape: Shape) -> bool:
    """Whether a line of this shape is an ordinary event, which the scan only records
    by id and offset: exactly one of action/observation, of a type that is not
    special, and not hidden (`hidden` sits in args for actions, extras for
    observations)."""
    action, observation, args_hidden, extras_hidden = shape
    if action is not UNSET:
        return action not in SPECIAL_ACTIONS and observation is UNSET and args_hidden is not True
    if observation is UNSET or observation in SPECIAL_OBSERVATIONS:
        return False
    return extras_hidden is not True


class _Verdicts(dict[Shape, bool]):
    """`is_ordinary` of each shape met so far: a log has few of them."""

    def __missing__(self, shape: Shape) -> bool:
        if len(self) >= SHAPES_MAX:
            self.clear()
        verdict = self[shape] = is_ordinary(shape)
        return verdict


_verdict = _Verdicts().__getitem__  # TypeError for a shape that cannot be hashed


def ordinary_id(raw: bytes) -> int | None:
    """The id of the event on line `raw` when it is an ordinary one (`is_ordinary`);
    None for every other line, which the full validator then reads.

    simdjson checks the whole line (syntax, UTF-8, numbers that overflow, depth) and
    accepts no line that orjson refuses but one behind a byte-order mark, which
    msgspec refuses; a line either doubts gets None. msgspec reads the five fields,
    unescaping keys and keeping the last of duplicate keys, as orjson does.
    tests/test_fast_scan.py holds the lines where they differ.
    """
    if len(raw) > FAST_LINE_MAX:
        return None
    try:
        _validate(raw)
        head = _decode_head(raw)
        ordinary = _verdict(_shape(head))
    except (ValueError, RuntimeError, TypeError):
        return None
    event_id = head.id
    return event_id if ordinary and event_id is not UNSET else None


def sort_batch(lines: list[bytes], offset: int, stretch: Classified) -> int:
    """Sort `lines`, which start at byte `offset`, into `stretch` as `classify_lines`
    does with `ordinary_id`, but a whole batch at a time; returns the offset after
    them. A batch with a line either library doubts, an id that is not an integer of
    64 bits, or ordinary ids that do not increase is sorted line by line."""
    try:
        if max(map(len, lines)) > FAST_LINE_MAX:
            raise ValueError("a long line")
        deque(map(_validate, lines), 0)
        heads = list(map(_decode_head, lines))
        ordinary = list(map(_verdict, map(_shape, heads)))
        ids = list(compress(map(_id, heads), ordinary))
        checked = array("q", ids)  # TypeError for a missing id, OverflowError past 64 bits
    except (ValueError, RuntimeError, TypeError, OverflowError):
        return classify_lines(lines, offset, stretch, ordinary_id)
    previous = stretch.ids[-1] if stretch.ids else -1
    if ids and not (previous < ids[0] and all(map(lt, ids, islice(ids, 1, None)))):
        return classify_lines(lines, offset, stretch, ordinary_id)
    starts = list(accumulate(map(len, lines), initial=offset))
    before, first_line = len(stretch.ids), stretch.lines
    number = -1
    for passed in range(len(lines) - len(ids)):  # the lines that are not ordinary
        number = ordinary.index(False, number + 1)
        # `passed` of them come before this one in the batch
        stretch.others.append(
            (before + number - passed, first_line + number, starts[number], starts[number + 1])
        )
    stretch.ids.extend(checked)
    stretch.offsets.extend(compress(starts, ordinary))
    stretch.lines += len(lines)
    stretch.end = starts[-1]
    return stretch.end
