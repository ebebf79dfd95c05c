"""Pins: facts every condensation must carry, and events it must never forget.

A pin's text comes from `pins = [...]` in `[condenser]`, or from `condense pin LOG
"text"`, which keeps it in the log where the client skips a record it does not know
(`Replay.pins_in_log`: Claude Code), else in a side file beside it (`LOG.pins.json`;
for a conversation folder, beside the folder), kept here. Pinned events are named
for one run (`--pin-event ID`).

A view carries a pin when its text, case-folded with white space squeezed, is in one
of the view's events or its summary. A condensation drops a pin when the view before
it carried the pin and the view after it does not; `condense run` refuses such a
condensation (nothing is appended, exit 3), and `audit` lists the pins each
compaction in the log dropped, before anything else.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.errors import ConfigError, LogError
from condense_cli.core.events import Event
from condense_cli.core.files import replace_file


@dataclass(frozen=True)
class Pins:
    """What one run must keep: texts to carry, and events (by id) never to forget."""

    texts: tuple[str, ...] = ()
    events: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.texts or self.events)


SUFFIX = ".pins.json"
MAX_PIN_CHARS = 2_000


def pins_path(log: str) -> Path:
    """The side file of the log (or conversation folder) at `log`."""
    path = Path(log)
    return path.with_name(path.name.rstrip("/") + SUFFIX)


MAX_PINS_BYTES = 1 << 20  # a pins file larger than this is no pins file


def read_pins(log: str) -> list[str]:
    """The log's pins, in the order they were added (none without a side file)."""
    return list(_pins_file(log).get("pins", []))


def _pins_file(log: str) -> dict[str, Any]:
    """The side file's object ({} without one): a regular file of at most
    `MAX_PINS_BYTES` whose `pins` is a list of texts (other keys are kept as they are);
    LogError for anything else (a FIFO is never opened)."""
    from condense_cli.core.files import NotSmallFile, read_small

    path = pins_path(log)
    try:
        raw = read_small(path, MAX_PINS_BYTES)
    except NotSmallFile as exc:
        raise LogError(
            str(path), f"is not a pins file: {exc}", hint="remove it; `condense pin` writes it"
        ) from None
    if raw is None:
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        data = None
    found: dict[str, Any] = data if isinstance(data, dict) else {"pins": None}
    pins = found.get("pins", [])
    if not isinstance(pins, list) or not all(isinstance(p, str) for p in pins):
        raise LogError(
            str(path),
            'is not a pins file: expected {"pins": ["text", ...]}',
            hint="fix or remove it; `condense pin` writes it",
        )
    return found


def check_pin(text: str) -> str:
    """A pin's text as given, or ConfigError when it cannot be one."""
    if not text.strip():
        raise ConfigError("a pin needs some text")
    if len(text) > MAX_PIN_CHARS:
        raise ConfigError(f"a pin is at most {MAX_PIN_CHARS:,} characters (got {len(text):,})")
    return text


def add_pin(log: str, text: str) -> bool:
    """Add a pin to the log's side file (once); False when it was there already.
    The file is replaced whole (written beside it, fsynced, renamed) under a lock."""
    check_pin(text)
    path = pins_path(log)
    lock_path = path.with_name(path.name + ".lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        data = _pins_file(log)
        pins = list(data.get("pins", []))
        if text in pins:
            return False
        kept = data | {"pins": [*pins, text]}  # any other key as it was
        body = orjson.dumps(kept, option=orjson.OPT_INDENT_2) + b"\n"
        replace_file(path, body)
    return True


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def carried(pins: Iterable[str], events: Iterable[Event]) -> set[str]:
    """The pins whose text one of `events` (a view, with its summary) holds."""
    texts = [_squash(text) for event in events for text in _texts(event)]
    return {pin for pin in pins if any(_squash(pin) in text for text in texts)}


def holding(pin: str, events: Iterable[Event]) -> list[Event]:
    """The events (not a summary) whose text holds `pin`."""
    wanted = _squash(pin)
    return [
        e for e in events if not e.is_summary and any(wanted in _squash(text) for text in _texts(e))
    ]


def dropped(pins: Iterable[str], before: Iterable[Event], after: Iterable[Event]) -> list[str]:
    """The pins the view `before` carried and the view `after` does not, in order."""
    pins = list(pins)
    was, now = carried(pins, before), carried(pins, after)
    return [pin for pin in pins if pin in was and pin not in now]


def _texts(event: Event) -> Iterable[str]:
    yield event.text
    if event.thought:
        yield event.thought
    call = event.tool_call
    if call is not None:
        yield orjson.dumps(call[1]).decode()
