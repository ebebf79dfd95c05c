"""Condensers that rewrite what the model sees for this step only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from condense_cli.condensers.base import Condenser, Result, require
from condense_cli.core.events import Event, View, same_start

MASK = "<MASKED>"

T = TypeVar("T")


class PerEvent(Generic[T]):
    """What `work` makes of each event of a list, remembered for the next list: the
    events it starts with that the last list held at the same places are not worked
    out again. A condenser run after every step of a history (`simulate`) is asked
    about the same events, plus one, at each step; without this, an event that reads
    its record back from the log would parse it at every step."""

    def __init__(self, work: Callable[[Event], T]) -> None:
        self.work = work
        self.events: list[Event] = []
        self.made: list[T] = []  # of `events`

    def of(self, events: list[Event]) -> list[T]:
        same = same_start(self.events, events)
        made = self.made[:same] + [self.work(e) for e in events[same:]]
        self.events, self.made = events, made
        return made


@dataclass(frozen=True)
class NoopConfig:
    def validate(self) -> None:
        pass


class NoopCondenser(Condenser):
    """Leaves the view as it is."""

    name = "noop"
    config_class = NoopConfig

    def condense(self, view: View) -> Result:
        return view.with_note("the noop condenser never condenses")


@dataclass(frozen=True)
class ObservationMaskingConfig:
    attention_window: int = 5

    def validate(self) -> None:
        require(self.attention_window >= 1, "attention_window", "must be at least 1")


class ObservationMaskingCondenser(Condenser):
    """Masks the content of observations older than the attention window."""

    name = "observation_masking"
    config_class = ObservationMaskingConfig

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.masks = PerEvent(_masked)

    def condense(self, view: View) -> Result:
        cutoff = max(len(view) - self.config.attention_window, 0)
        return view.with_events(self.masks.of(view.events[:cutoff]) + view.events[cutoff:])


def _masked(event: Event) -> Event:
    """An observation with its content masked; any other event as it is."""
    return event if event.is_action or event.is_summary else event.masked(MASK)


@dataclass(frozen=True)
class BrowserOutputConfig:
    attention_window: int = 1

    def validate(self) -> None:
        require(self.attention_window >= 1, "attention_window", "must be at least 1")


class BrowserOutputCondenser(Condenser):
    """Replaces all but the newest browse observations with a one-line note."""

    name = "browser_output"
    config_class = BrowserOutputConfig

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.pages = PerEvent(_is_page)
        self.notes = PerEvent(_page_note)

    def condense(self, view: View) -> Result:
        events = list(view)
        pages = [i for i, page in enumerate(self.pages.of(events)) if page]
        older = pages[: max(len(pages) - self.config.attention_window, 0)]
        for i, note in zip(older, self.notes.of([events[i] for i in older]), strict=True):
            events[i] = note
        return view.with_events(events)


def _is_page(event: Event) -> bool:
    return not event.is_action and event.type == "browse"


def _page_note(event: Event) -> Event:
    """A browse observation's page replaced by a note of its address."""
    return event.masked(f"Visited URL {event.url}\nContent omitted")
