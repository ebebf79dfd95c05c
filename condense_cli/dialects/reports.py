"""What `stats` reports of a log: its sizes against the view, each condensation as a
row, where each compaction fired against its client's threshold, and what each cost
and saved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from condense_cli.core.usage import Economics


@dataclass(frozen=True)
class Threshold:
    """A compaction against the threshold its client was configured with: where it
    fired (`measured`, as the log records it), where it should have, and in what."""

    unit: str  # "tokens" or "events"
    measured: int
    threshold: int
    source: str  # where the threshold comes from
    tolerance: int = 0  # how far from it still counts as "at"
    manual: bool = False  # asked for (a /compact, a request): no threshold applies

    @property
    def fired(self) -> str:
        """`manual`, `at`, `early` or `late`."""
        if self.manual:
            return "manual"
        off = self.measured - self.threshold
        return "at" if abs(off) <= self.tolerance else "early" if off < 0 else "late"

    def describe(self) -> str:
        """`early by 12,000 tokens (155,000 against 167,000)`."""
        against = f"{self.measured:,} against {self.threshold:,} {self.unit}"
        if self.fired in ("manual", "at"):
            return f"{self.fired} ({against})"
        return f"{self.fired} by {abs(self.measured - self.threshold):,} {self.unit} ({against})"

    def to_json(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "measured": self.measured,
            "threshold": self.threshold,
            "fired": self.fired,
            "by": self.measured - self.threshold,
            "source": self.source,
        }


@dataclass
class CondensationRow:
    """One condensation as `condense stats` reports it.

    The extras are one dialect's, left out of the JSON when None: `view_size_before`,
    `log` (the client's own figures: trigger, pre/post tokens, duration) and
    `tokens_before`/`tokens_after` (with a tokenizer) for Claude Code; `log_says`
    (what the rollout's token counts said) for Codex. Codex compactions record the
    history they keep, not the ids they forget, so their `forgotten_ranges` is empty.
    `threshold`: where it fired against the client's configured threshold.
    """

    id: object
    line: int
    forgotten_events: int
    forgotten_ranges: list[tuple[int, int]]
    summary_chars: int | None
    view_size_after: int
    view_size_before: int | None = None
    log: dict[str, Any] | None = None
    tokens_before: int | None = None
    tokens_after: int | None = None
    log_says: dict[str, Any] | None = None
    threshold: Threshold | None = None
    economics: Economics | None = None  # what it cost and saved, where the log says

    def to_json(self) -> dict[str, Any]:
        """The row as `stats --format json` prints it (the keys in this order)."""
        row: dict[str, Any] = {
            "id": self.id,
            "line": self.line,
            "forgotten_events": self.forgotten_events,
            "forgotten_ranges": [list(r) for r in self.forgotten_ranges],
            "summary_chars": self.summary_chars,
        }
        if self.view_size_before is not None:
            row["view_size_before"] = self.view_size_before
        row["view_size_after"] = self.view_size_after
        for extra in ("log", "tokens_before", "tokens_after", "log_says"):
            value = getattr(self, extra)
            if value is not None:
                row[extra] = value
        if self.threshold is not None:
            row["threshold"] = self.threshold.to_json()
        if self.economics is not None:
            row["economics"] = self.economics.to_json()
        return row


@dataclass(frozen=True)
class Sizes:
    """Characters or tokens of the log against the view (`tokenizer`: tokens only)."""

    log: int
    view: int
    tokenizer: str | None = None

    @property
    def ratio(self) -> float | None:
        return round(self.view / self.log, 4) if self.log else None

    def to_json(self) -> dict[str, Any]:
        sizes: dict[str, Any] = {"log": self.log, "view": self.view, "ratio": self.ratio}
        if self.tokenizer is not None:
            sizes["tokenizer"] = self.tokenizer
        return sizes


@dataclass
class StatsReport:
    """The numbers of `condense stats` for one log, the same shape for every dialect.

    `generation` (name, reason) is OpenHands V1's: which SDK's view the replay took.
    `messages` is added by the command (the view as chat messages, counted)."""

    dialect: str
    log: str
    bytes: int
    events: int
    visible_events: int
    by_type: dict[str, dict[str, int]]
    condensations: list[CondensationRow]
    requests: int
    unhandled_request: bool
    view_events: int
    forgotten_events: int
    chars: Sizes
    tokens: Sizes | None
    generation: tuple[str | None, str | None] | None = None
    messages: dict[str, Any] | None = None
    # What the client does with the log beyond its view (Claude Code: the
    # microcompactions older clients recorded, and its compaction on resume).
    client: dict[str, Any] | None = None
    thrash: list[dict[str, Any]] | None = None  # compactions back to back (`analysis.thrash`)
    model: str | None = None  # the model the agent used last (`Replay.model`)
    economics: Economics | None = None  # its compactions' figures, added up (by the command)

    def to_json(self) -> dict[str, Any]:
        """The report as `stats --format json` prints it (the keys in this order)."""
        report: dict[str, Any] = {"dialect": self.dialect}
        if self.generation is not None:
            report["generation"] = {"name": self.generation[0], "reason": self.generation[1]}
        report |= {
            "log": self.log,
            "model": self.model,
            "bytes": self.bytes,
            "events": self.events,
            "visible_events": self.visible_events,
            "by_type": self.by_type,
            "condensations": [row.to_json() for row in self.condensations],
            "requests": self.requests,
            "unhandled_request": self.unhandled_request,
            "view": {"events": self.view_events, "forgotten_events": self.forgotten_events},
            "chars": self.chars.to_json(),
            "tokens": self.tokens.to_json() if self.tokens is not None else None,
        }
        if self.messages is not None:
            report["messages"] = self.messages
        if self.client is not None:
            report["client"] = self.client
        if self.thrash is not None:
            report["thrash"] = self.thrash
        if self.economics is not None:
            report["economics"] = self.economics.to_json()
        return report
