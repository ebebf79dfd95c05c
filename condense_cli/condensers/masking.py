"""Condensers that rewrite what the model sees for this step only."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from condense_cli.condensers.base import (
    Builder,
    Condenser,
    EventTokens,
    PerEvent,
    Result,
    require,
    text_bytes,
)
from condense_cli.core.events import Event, View, cleared_arguments
from condense_cli.core.jsonlines import encode

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


CLEARED = "[tool result cleared to save context]"
CLEARED_INPUT = "[tool input cleared to save context]"
NOTE_ARGUMENTS = cleared_arguments(CLEARED_INPUT)


@dataclass(frozen=True)
class ToolResultClearingConfig:
    trigger: int = 100_000  # tokens of the view past which tool results are cleared
    keep: int = 3  # the newest tool uses whose results stay
    clear_at_least: int = 0  # tokens a clearing must free, else it waits
    exclude_tools: list[str] = field(default_factory=list)  # tools never cleared
    clear_inputs: bool = False  # the cleared results' calls' arguments too

    def validate(self) -> None:
        require(self.trigger >= 1, "trigger", "must be at least 1 token")
        require(self.keep >= 0, "keep", "must be 0 or more")
        require(self.clear_at_least >= 0, "clear_at_least", "must be 0 or more tokens")


class ToolResultClearingCondenser(Condenser):
    """Context editing: once the view passes `trigger` tokens, the results of every
    tool use but the newest `keep` are replaced by a short note, at once, if that frees
    at least `clear_at_least` tokens (with `clear_inputs`, their calls' arguments too);
    a result once cleared stays cleared, so the prompt cache is lost once a clearing,
    not at every step."""

    name = "tool_result_clearing"
    config_class = ToolResultClearingConfig

    def __init__(self, config: Any, model: str | None = None) -> None:
        super().__init__(config)
        self.model = model
        self.cleared: dict[object, Event] = {}  # the key of each result cleared -> its note
        # with `clear_inputs`, the key of each call cleared -> the call, and its tokens
        self.calls: dict[object, tuple[Event, int]] = {}
        self.lengths = PerEvent(text_bytes)
        self.tokens = EventTokens(model)

    @classmethod
    def from_config(cls, config: Any, llms: Any, build: Builder) -> Condenser:
        return cls(config, llms.default.model)

    def condense(self, view: View) -> Result:
        events = view.events
        results = _tool_results(events, self.config.exclude_tools)
        if not results:
            return view.with_note("no tool result to clear")
        note = len(CLEARED) // 4
        # a view of fewer bytes than the trigger holds fewer tokens: it is not counted
        if sum(self.lengths.of(events)) > self.config.trigger:
            sizes = self.tokens.of(events)
            tokens = sum(
                note if e.key in self.cleared else self.calls.get(e.key, (e, size))[1]
                for e, size in zip(events, sizes, strict=True)
            )
            if tokens > self.config.trigger:
                uses = sorted({use for _, use in results})
                newest = set(uses[len(uses) - self.config.keep :]) if self.config.keep else set()
                fresh = [
                    index
                    for index, use in results
                    if use not in newest
                    and events[index].key is not None
                    and events[index].key not in self.cleared
                ]
                calls = (
                    self._calls(events, sizes, results, fresh) if self.config.clear_inputs else {}
                )
                freed = sum(max(0, sizes[i] - note) for i in fresh)
                freed += sum(sizes[i] - tokens for i, (_, tokens) in calls.items())
                if fresh and freed >= self.config.clear_at_least:
                    self.cleared.update((events[i].key, events[i].masked(CLEARED)) for i in fresh)
                    self.calls.update((events[i].key, call) for i, call in calls.items())
        if not self.cleared:
            return view.with_note("within the trigger: nothing cleared")
        cleared, inputs = self.cleared, self.calls
        return view.with_events(
            [
                cleared.get(e.key) or inputs.get(e.key, (e, 0))[0] if e.key is not None else e
                for e in events
            ]
        )

    def _calls(
        self,
        events: list[Event],
        sizes: list[int],
        results: list[tuple[int, int]],
        fresh: list[int],
    ) -> dict[int, tuple[Event, int]]:
        """The calls of the results at `fresh` (by their index), each with its arguments
        cleared and its tokens then (`sizes`: each event's before); those cleared
        before left out, and those whose arguments are no longer than the note."""
        clearing = set(fresh)
        uses = {use for index, use in results if index in clearing}
        found = {}
        for index in sorted(uses):
            event = events[index]
            if event.key is None or event.key in self.calls:
                continue
            called = event.tool_call
            if called is None or len(encode(called[1])) <= len(encode(NOTE_ARGUMENTS)):
                continue  # (arguments no longer than the note are left as they are)
            try:
                call = event.inputs_cleared(CLEARED_INPUT)
            except (NotImplementedError, ValueError):  # a call with no input to clear
                continue
            found[index] = call, min(sizes[index], self.tokens.one(call))
        return found


def _tool_results(events: list[Event], excluded: list[str]) -> list[tuple[int, int]]:
    """Each tool result of `events` (its index) with the index of its tool use; those
    of an `excluded` tool left out."""
    uses: dict[object, int] = {}
    found = []
    for index, event in enumerate(events):
        if event.is_action:
            call = event.tool_call
            if call is not None and call[0] not in excluded:
                for key in (event.tool_call_id, event.key):
                    if key is not None:
                        uses[key] = index
            continue
        if event.is_summary:
            continue
        use = uses.get(event.tool_call_id) if event.tool_call_id is not None else None
        if use is None and event.cause is not None:
            use = uses.get(event.cause)
        if use is not None:
            found.append((index, use))
    return found
