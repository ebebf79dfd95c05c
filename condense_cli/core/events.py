"""The neutral model every command works on: events, views and condensations.

Nothing here knows a log format. A dialect (see `condense_cli.dialects`) reads its
own records into `Event` subclasses that answer the same questions (who, what kind,
what text, which pair), and replays its log into a `View`. Condensers read only these
facts and decide in *keys*: integers that increase down the log (the id itself in
OpenHands V0, the position elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import compress, count
from operator import is_not
from typing import Any

from condense_cli.core.jsonlines import encode


class LastParsed:
    """The one event whose record was parsed last, its parse, and what was made of it
    (blocks, facts). A dialect whose events read their records back keeps none of
    them parsed but this one: a walk over a long view holds one parse at a time, and
    the questions asked of one event in a row parse it once."""

    __slots__ = ("data", "event", "made")

    def __init__(self) -> None:
        self.event: object = None
        self.data: Any = None
        self.made: Any = None

    def data_of(self, event: object, parse: Callable[[], Any]) -> Any:
        """`event`'s parse: `parse()` unless it is the last one parsed."""
        if self.event is not event:
            self.event, self.data, self.made = event, parse(), None
        return self.data

    def kept_or_parsed(self, event: object, kept: Any, parse: Callable[[], Any]) -> Any:
        """An event's data: what it keeps (`kept`) when it keeps it, else its parse."""
        return kept if kept is not None else self.data_of(event, parse)

    def made_of(self, event: object, parse: Callable[[], Any], make: Callable[[Any], Any]) -> Any:
        """What `make` makes of `event`'s parse, made once per parse."""
        data = self.data_of(event, parse)
        if self.made is None:
            self.made = make(data)
        return self.made


class Event:
    """One event of a view, in neutral terms.

    `key` orders the event and is what a condensation forgets (None for an event
    that cannot be forgotten by id, such as a summary replay inserted). `raw` is
    the event's bytes as read (None for an event made or rewritten here); `data`
    is the parsed record. Dialects subclass this to read their own records.
    """

    __slots__ = ("data", "key", "raw")

    # What every dialect's events must answer: left to a default, pairing, masking
    # and the audit would silently see nothing. The other facts default to "none".
    REQUIRED = (
        "source",
        "is_action",
        "type",
        "text",
        "tool_call_id",
        "is_summary",
        "tool_call",
        "masked",
    )

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = [name for name in Event.REQUIRED if getattr(cls, name) is getattr(Event, name)]
        if missing:
            raise TypeError(f"{cls.__name__} must define {', '.join(missing)}")

    def __init__(self, data: dict[str, Any], key: int | None, raw: bytes | None) -> None:
        self.data = data
        self.key = key
        self.raw = raw

    # --- facts a dialect provides ----------------------------------------------------

    @property
    def id(self) -> object:
        """The event's id as the log writes it (the key unless the dialect says otherwise)."""
        return self.key

    @property
    def source(self) -> str:
        """`user`, `agent` or `environment` (or empty when unknown)."""
        return ""

    @property
    def is_action(self) -> bool:
        """An action (or message) of the user or the agent, not an observation."""
        return True

    @property
    def type(self) -> str:
        """The action or observation type, e.g. `run`, `message`, `browse`."""
        return ""

    @property
    def text(self) -> str:
        """The main text of the event, as the model reads it."""
        return ""

    @property
    def thought(self) -> str:
        """The reasoning attached to an action, if any."""
        return ""

    @property
    def tool_call_id(self) -> str | None:
        """The tool call an action makes or an observation answers."""
        return None

    @property
    def cause(self) -> int | None:
        """The key of the action this observation answers, when the log says so."""
        return None

    @property
    def is_summary(self) -> bool:
        """A summary that a condensation put in place of forgotten events."""
        return False

    @property
    def url(self) -> str:
        """The address a browsing observation shows (empty for other events)."""
        return ""

    @property
    def exit_code(self) -> int | None:
        """The exit code a command observation reports, if any."""
        return None

    @property
    def recall_query(self) -> str | None:
        """For a recall action, the text it looks up (OpenHands' memory recall)."""
        return None

    @property
    def unit(self) -> int | None:
        """The key of the first event of a unit this event is kept or forgotten with,
        beyond its action/observation pair (e.g. the parallel tool calls of one model
        response); None when it stands alone."""
        return None

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        """For an action that calls a tool: the tool's name and its arguments."""
        return None

    @property
    def is_instruction(self) -> bool:
        """A message the user typed (not context a client added, not a summary)."""
        return (
            self.source == "user"
            and self.is_action
            and self.type == "message"
            and not self.is_summary
        )

    def masked(self, text: str) -> Event:
        """A copy whose observation content reads `text`; it keeps its key."""
        raise NotImplementedError(f"{type(self).__name__} cannot be rewritten")

    def inputs_cleared(self, note: str) -> Event:
        """A copy of an action whose tool calls' arguments are `cleared_arguments(note)`
        (a tool that takes raw text, `note` itself); it keeps its key."""
        raise NotImplementedError(f"{type(self).__name__} cannot be rewritten")

    def to_json(self) -> bytes:
        """The event as one JSON line body: the original bytes when we have them,
        else its record serialised (an event made or rewritten here)."""
        raw = self.raw  # (a dialect may read it back from its log: once)
        return raw if raw is not None else encode(self.data)

    @property
    def timestamp(self) -> str:
        """When the event happened, as its record stamps it (ISO 8601; "": none)."""
        data = self.data
        stamp = data.get("timestamp") if isinstance(data, dict) else None
        return stamp if isinstance(stamp, str) else ""

    # --- derived --------------------------------------------------------------------

    @property
    def kind(self) -> str:
        """`action` or `observation`."""
        return "action" if self.is_action else "observation"


def cleared_arguments(note: str) -> dict[str, str]:
    """The arguments a tool call whose input was cleared shows in their place."""
    return {"note": note}


def model_text(event: Event) -> str:
    """What the model reads of an event: its thought and its main text."""
    thought = event.thought
    return f"{thought}\n{event.text}" if thought else event.text


@dataclass(frozen=True)
class View:
    """What the model sees: events in order, and whether a request is pending.

    `summary` is the latest summary replay inserted (also in `events`) and
    `summary_offset` the offset its condensation asked for. `note` is set by a
    condenser that looked at the view and decided not to condense it.
    `make_summary` builds a summary event the way this view's dialect shows one.
    `pins` are the texts a condensation of this view must carry verbatim (`core.pins`):
    the config's and the log's, set once by whoever runs the condenser.
    """

    events: list[Event]
    unhandled_request: bool = False
    summary: Event | None = None
    summary_offset: int | None = None
    note: str | None = None
    make_summary: Callable[[str], Event] | None = field(default=None, compare=False, repr=False)
    pins: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)

    def __getitem__(self, index: int) -> Event:
        return self.events[index]

    @property
    def keys(self) -> list[int]:
        """The keys of the events a condensation can forget, in order."""
        return [e.key for e in self.events if e.key is not None]

    def with_events(self, events: list[Event]) -> View:
        """The same view (request flag, summary) over rewritten events."""
        return replace(self, events=events, note=None)

    def with_note(self, note: str) -> View:
        """The same view, marked with why a condenser left it unchanged."""
        return replace(self, note=note)

    def with_request(self) -> View:
        """The same view with a condensation request pending (`run --force`)."""
        return replace(self, unhandled_request=True)


@dataclass(frozen=True)
class Condensation:
    """A decision to forget the events with keys `forgotten`, optionally replacing
    them with a summary shown at `summary_offset`."""

    forgotten: tuple[int, ...]
    summary: str | None = None
    summary_offset: int | None = None
    usage: dict[str, Any] = field(default_factory=dict)  # model, tokens, cost


def same_start(before: list[Event], now: list[Event]) -> int:
    """How many events `now` starts with that are `before`'s very objects, found at C
    speed (a view rewritten at every step keeps most of the step before's)."""
    return next(compress(count(), map(is_not, before, now)), min(len(before), len(now)))


def summary_position(offset: int | None, length: int) -> int:
    """Where a summary asked for at `offset` lands in a view of `length` events."""
    return min(offset or 0, length)


def apply_condensation(view: View, condensation: Condensation) -> View:
    """The view replay will produce once `condensation` is appended to the log.

    A summary without a key floats: it is superseded by a new summary, or put back
    at its offset. A summary with a key is an event like any other: it stays where
    it is unless the condensation forgets it, and a new summary is added beside it.
    """
    forgotten = set(condensation.forgotten)
    summary, offset = view.summary, view.summary_offset
    floating = summary is not None and summary.key is None
    kept = [
        e
        for e in view
        if not (floating and e is summary) and (e.key is None or e.key not in forgotten)
    ]
    if summary is not None and not floating and summary.key in forgotten:
        summary, offset = None, None
    if condensation.summary is not None:
        if view.make_summary is None:
            raise ValueError("this view cannot show a new summary")
        new = view.make_summary(condensation.summary)
        summary, offset = new, condensation.summary_offset
        kept.insert(summary_position(offset, len(kept)), new)
    elif floating and summary is not None:
        kept.insert(summary_position(offset, len(kept)), summary)
    return replace(
        view,
        events=kept,
        unhandled_request=False,
        summary=summary,
        summary_offset=offset,
        note=None,
    )


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding of `check`: an error makes the log invalid, a warning does not
    (but fails `check --strict`), a note says what a client does and fails nothing."""

    line: int | None
    message: str
    severity: str = "error"
    path: str | None = None  # the file, when a log is several files (else the log itself)

    def where(self, log: str) -> str:
        """`file:line`, or the file alone; `log` when the problem names no file."""
        path = self.path or log
        return f"{path}:{self.line}" if self.line is not None else path


@dataclass(slots=True)
class CondensationRecord:
    """What one condensation in a log did, for `stats` and `check`."""

    id: object  # the condensation's id as the log writes it
    line: int  # its line (or file index) in the log
    ranges: list[tuple[int, int]]  # the keys it forgets, as inclusive runs
    forgotten_events: int  # events of the view it newly forgot
    summary_chars: int | None
    view_size: int  # view size right after it
    # The key ranges this condensation forgot first (no earlier one had): where
    # `condense view` says "forgotten by condensation N".
    first_forgotten: list[tuple[int, int]] = field(default_factory=list)
    # the view's size right before it, where the dialect knows it (a condensation that
    # puts in new events is not the view after it plus what it forgot)
    view_size_before: int | None = None
