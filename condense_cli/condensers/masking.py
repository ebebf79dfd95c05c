"""Condensers that rewrite what the model sees for this step only."""

from __future__ import annotations

from dataclasses import dataclass

from condense_cli.condensers.base import Condenser, Result, require
from condense_cli.core.events import View

MASK = "<MASKED>"


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

    def condense(self, view: View) -> Result:
        cutoff = len(view) - self.config.attention_window
        events = [
            event.masked(MASK)
            if i < cutoff and not event.is_action and not event.is_summary
            else event
            for i, event in enumerate(view)
        ]
        return view.with_events(events)


@dataclass(frozen=True)
class BrowserOutputConfig:
    attention_window: int = 1

    def validate(self) -> None:
        require(self.attention_window >= 1, "attention_window", "must be at least 1")


class BrowserOutputCondenser(Condenser):
    """Replaces all but the newest browse observations with a one-line note."""

    name = "browser_output"
    config_class = BrowserOutputConfig

    def condense(self, view: View) -> Result:
        events = list(view)
        seen = 0
        for i in range(len(events) - 1, -1, -1):
            event = events[i]
            if event.is_action or event.type != "browse":
                continue
            seen += 1
            if seen > self.config.attention_window:
                events[i] = event.masked(f"Visited URL {event.url}\nContent omitted")
        return view.with_events(events)
