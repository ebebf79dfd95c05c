"""Condensers that forget events by position, without a model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from condense_cli.condensers.base import (
    Builder,
    Condenser,
    EventTokens,
    Result,
    RollingCondenser,
    check_window,
    close_over_pairs,
    fitting_tail,
    forget_ids,
    kept_head,
    require,
    size_trigger,
    token_trigger,
)
from condense_cli.core.events import Condensation, Event, View
from condense_cli.core.text import plural


@dataclass(frozen=True)
class RecentEventsConfig:
    keep_first: int = 1
    max_events: int = 100
    keep_task: bool = True

    def validate(self) -> None:
        require(self.max_events >= 1, "max_events", f"must be at least 1 (got {self.max_events})")
        require(self.keep_first >= 0, "keep_first", f"must not be negative (got {self.keep_first})")
        require(
            self.keep_first < self.max_events,
            "keep_first",
            f"({self.keep_first}) must be less than max_events ({self.max_events})",
        )


class RecentEventsCondenser(Condenser):
    """Shows the first `keep_first` events (through the user's first task message,
    with `keep_task`) and the newest ones, `max_events` in all."""

    name = "recent_events"
    config_class = RecentEventsConfig

    def condense(self, view: View) -> Result:
        keep_first, max_events = self.config.keep_first, self.config.max_events
        if len(view) <= max_events:
            return view.with_note(f"the view has {plural(len(view), 'event')}, within max_events")
        events = list(view)
        head = kept_head(view, keep_first, self.config.keep_task)
        if head >= max_events:
            head = keep_first  # the task lies too far in: the view keeps its first events
        return view.with_events(events[:head] + events[len(events) - (max_events - head) :])


@dataclass(frozen=True)
class AmortizedForgettingConfig:
    max_size: int = 100
    keep_first: int = 1
    keep_task: bool = True
    max_tokens: int | None = None  # also forget once the view holds more tokens

    def validate(self) -> None:
        check_window(self.max_size, self.keep_first)
        if self.max_tokens is not None:
            require(self.max_tokens >= 100, "max_tokens", "must be at least 100")


class AmortizedForgettingCondenser(RollingCondenser):
    """Once the view outgrows `max_size` events (or `max_tokens`), forgets the middle
    down to half of it."""

    name = "amortized_forgetting"
    config_class = AmortizedForgettingConfig

    def __init__(self, config: Any, model: str | None = None) -> None:
        super().__init__(config)
        self.tokens = EventTokens(model)

    @classmethod
    def from_config(cls, config: Any, llms: Any, build: Builder) -> Condenser:
        return cls(config, llms.default.model)

    def skip_reason(self, view: View) -> str | None:
        reason = size_trigger(view, self.config.max_size)
        limit = self.token_limit()
        if reason is None or limit is None:
            return reason
        by_tokens = token_trigger(self.tokens.of(view.events), limit)
        return None if by_tokens is None else f"{reason}; {by_tokens}"

    def get_condensation(self, view: View) -> Result:
        keep_last = self.config.max_size // 2 - self.config.keep_first
        limit = self.token_limit()
        if limit is not None:
            counts = self.tokens.of(view.events)
            keep_last = fitting_tail(counts, self.config.keep_first, limit[0] // 2, keep_last)
        return forget_middle(view, self.config.keep_first, keep_last, self.config.keep_task)


def forget_middle(view: View, keep_first: int, keep_last: int, keep_task: bool = False) -> Result:
    """Forget everything between the head (`keep_first` events, or through the
    view's summary, or with `keep_task` through the user's first task message) and
    the last `keep_last` events."""
    events = list(view)
    head_length = kept_head(view, keep_first, keep_task)
    head = events[:head_length]
    middle = events[head_length : max(head_length, len(events) - keep_last)]
    forget = close_over_pairs(view, forget_ids(view, middle), forget_ids(view, head))
    if not forget:
        plain = kept_head(view, keep_first)
        first = (
            f"first {keep_first}"
            if head_length == keep_first
            else "events up to the summary"
            if head_length == plain
            else f"first {head_length}, through the user's first task message"
        )
        return view.with_note(
            f"nothing to forget: the view has {plural(len(view), 'event')}, and the "
            f"condenser keeps the {first} and the last {keep_last}"
        )
    return Condensation(tuple(sorted(forget)))


@dataclass(frozen=True)
class ConversationWindowConfig:
    def validate(self) -> None:
        pass


class ConversationWindowCondenser(RollingCondenser):
    """On request, keeps the opening of the conversation and about the newer half."""

    name = "conversation_window"
    config_class = ConversationWindowConfig

    def skip_reason(self, view: View) -> str | None:
        if view.unhandled_request:
            return None
        return "conversation_window condenses only on request (condense request, or --force)"

    def get_condensation(self, view: View) -> Result:
        events = list(view)
        essential = essential_events(events)
        if essential is None:
            return view.with_note("nothing to forget: the view has no user message to keep")
        essential_keys = {e.key for e in essential if e.key is not None}
        essential_keys |= forget_ids(view, events[: kept_head(view, 0)])
        recent = max(1, (len(events) - len(essential)) // 2)
        start = max(0, len(events) - recent)
        while start < len(events) and not events[start].is_action:
            start += 1  # never start on an observation whose action is dropped
        keep = essential_keys | forget_ids(view, events[start:])
        forget = forget_ids(view, events) - keep
        forget = close_over_pairs(view, forget, essential_keys)
        if not forget:
            return view.with_note(f"nothing to forget in a view of {plural(len(view), 'event')}")
        return Condensation(tuple(sorted(forget)))


def essential_events(events: list[Event]) -> list[Event] | None:
    """The system message, the first user message, and the recall that answers it."""
    first_user = next(
        (
            i
            for i, e in enumerate(events)
            if e.type == "message" and e.is_action and e.source == "user"
        ),
        None,
    )
    if first_user is None:
        return None
    user = events[first_user]
    found = [e for e in events if e.is_action and e.type == "system"][:1]
    found.append(user)
    for i in range(first_user + 1, len(events)):
        event = events[i]
        if event.recall_query is not None and event.recall_query == user.text:
            found.append(event)
            answer = next(
                (o for o in events[i + 1 :] if not o.is_action and o.cause == event.key), None
            )
            if answer is not None:
                found.append(answer)
            break
    return [e for e in found if e.key is not None]
