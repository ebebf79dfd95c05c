"""A session as it happened, for `condense report`: every event the agent saw, each
condensation where it fired with what it forgot and its audit, the current view, and
the size of the view after every step.

The view's size is measured the way `simulate` measures its runs, with the same
`count` of each event: after a condensation, the view it left; then each new event
added to it. A dialect that cannot step through its condensations (`audits`) gives a
timeline without bands (`audited` False), one that keeps no history (`simulates`)
the view's events only (`whole` False): a page that says so, not a refusal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from condense_cli.analysis.audit import Audit, LogAudit, audit_log, new_tallies, total
from condense_cli.core.clientconfig import ClientConfig
from condense_cli.core.events import Event
from condense_cli.dialects.base import CondensationStep, Replay


@dataclass
class Band:
    """One condensation, placed in the history where it fired."""

    number: int  # 1 for the log's first condensation
    id: object  # as the log writes it
    line: int  # its line (or file index) in the log
    at: int  # the index of the last event the view held when it fired (-1: none yet)
    forgotten: list[int]  # the indexes of the events it forgot
    summary: str | None
    audit: Audit
    events: tuple[int, int]  # the view's events before and after it
    tokens: tuple[int, int]  # the view's tokens before and after it


@dataclass
class Timeline:
    """Every event of a log's history, its condensations, and its current view."""

    path: str
    dialect: str
    model: str | None
    events: list[Event]  # every event the agent saw, in order
    requests: list[int]  # the indexes after which a condensation was asked for
    bands: list[Band]
    in_view: set[int]  # the indexes of the events the current view holds
    audit: LogAudit
    view_tokens: int  # of the current view, summaries included
    summaries: int = 0  # in the current view (a summary is no event of the history)
    measure: list[int] = field(default_factory=list)  # each event's own size
    # The view after each event (before a condensation that fired at it).
    sizes: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    audited: bool = True  # its condensations stepped through and audited
    whole: bool = True  # `events` is the whole history, not the view alone

    @property
    def forgotten_by(self) -> dict[int, int]:
        """Each forgotten event's index -> the number of the condensation that forgot it."""
        found: dict[int, int] = {}
        for band in self.bands:
            for index in band.forgotten:
                found.setdefault(index, band.number)
        return found

    @property
    def history_tokens(self) -> int:
        """What the model would read now if nothing had been condensed."""
        return sum(self.measure)

    @property
    def facts_lost(self) -> int:
        """The facts every condensation together lost."""
        every = total(self.audit.overall)
        return every.facts - every.kept


def timeline(
    replay: Replay,
    history: Iterable[Event | None],
    count: Callable[[Event], int],
    everything: bool = False,
    client: ClientConfig | None = None,
) -> Timeline:
    """The timeline of `replay`'s log (its `history()`, or its view for a dialect that
    keeps none), each event and view measured by `count`."""
    events: list[Event] = []
    requests: list[int] = []
    for item in history:
        if item is None:
            requests.append(len(events) - 1)
        else:
            events.append(item)
    index_of = {e.key: i for i, e in enumerate(events) if e.key is not None}
    bands: list[Band] = []

    def place(step: CondensationStep, audit: Audit) -> None:
        held = [index_of[e.key] for e in step.before if e.key in index_of]
        bands.append(
            Band(
                len(bands) + 1,
                step.id,
                step.line,
                max(held, default=-1),
                sorted(index_of[e.key] for e in step.forgotten if e.key in index_of),
                step.summary,
                audit,
                (len(step.before), len(step.after)),
                (sum(map(count, step.before)), sum(map(count, step.after))),
            )
        )

    view = replay.view()
    if replay.audits:
        audit = audit_log(replay, everything, client, each_step=place)
    else:  # nothing is known of what a condensation forgot: the view, unaudited
        current = Audit("current view", None, None, replay.forgotten_events, None, new_tallies())
        audit = LogAudit(replay.path, replay.dialect, [], current, replay.model)
    found = Timeline(
        replay.path,
        replay.dialect,
        replay.model,
        events,
        requests,
        bands,
        {index_of[e.key] for e in view if e.key in index_of},
        audit,
        sum(map(count, view)),
        sum(1 for e in view if e.is_summary),
    )
    found.audited, found.whole = replay.audits, replay.simulates
    found.measure = [count(e) for e in events]
    _walk(found)
    return found


def _walk(found: Timeline) -> None:
    """The view's size after each event: the view a condensation left, then each
    event added to it."""
    fired: dict[int, list[Band]] = {}
    for band in found.bands:
        fired.setdefault(band.at, []).append(band)
    size = tokens = 0
    for band in fired.get(-1, []):
        size, tokens = band.events[1], band.tokens[1]
    for index, measured in enumerate(found.measure):
        size += 1
        tokens += measured
        found.sizes.append(size)
        found.tokens.append(tokens)
        for band in fired.get(index, []):
            size, tokens = band.events[1], band.tokens[1]
