"""A model call a log records, with the tokens it used: what `condense cost` prices;
the calls around each compaction, and the figures a compaction is weighed in."""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

import orjson

# The services whose calls compact the history, not the agent's turns
CONDENSER = "condenser"  # OpenHands V1's condenser
COMPACTION = "compaction"  # a Codex remote compaction's own call
COMPACTING = (CONDENSER, COMPACTION)


@dataclass(slots=True, unsafe_hash=True)
class Usage:
    """One call's tokens, as the log records them. `input` is the input neither read
    from nor written to the prompt cache; `cache_write` the 5-minute writes and
    `cache_write_1h` the one-hour ones (priced apart).

    Never changed once made (`dataclasses.replace` makes another), but not declared
    frozen: a frozen one takes seven times as long to make, and `cost` makes one
    for each call of a whole history."""

    when: str  # the call's timestamp as the log writes it (ISO 8601; "" when none)
    model: str
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    cache_read: int = 0
    line: int | None = None  # where the log records it
    # the call's identity where the log gives one (Claude Code: message and request
    # ids): a copy of it in another session (a fork, a resumed copy) is the same call
    key: str | None = None
    cost: float | None = None  # the dollars the log itself records for the call, if any
    service: str = ""  # what made the call, where the log says (OpenHands: its condenser)
    # how the provider served it where that moves its price, as words the price table
    # names its rates or surcharges by (Claude Code's fast mode and US-only inference:
    # "fast", "us"; a Codex thread's service tier: "priority", "flex"); "" for the
    # standard service
    served: str = ""
    searches: int = 0  # web searches the provider ran for the call (billed apart)

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_write_1h + self.cache_read

    @property
    def by_agent(self) -> bool:
        """Whether the agent made the call (not its condenser or a compaction)."""
        return self.service not in COMPACTING

    @property
    def prompt(self) -> int:
        """The tokens of the prompt: what a long-context price tier is judged by."""
        return self.input + self.cache_write + self.cache_write_1h + self.cache_read

    def __reduce__(self) -> tuple[type[Usage], tuple[Any, ...]]:
        # pickled as its fields' values: a third of the time of a slotted class's
        # default (the calls of `--compactions`' spendings, handed back by workers)
        return Usage, _values_of(self)


_values_of = attrgetter(*(f.name for f in fields(Usage)))


def encode_calls(calls: list[Usage]) -> bytes:
    """Calls as JSON, each the array of its fields' values: what a worker hands back
    (a fifth of the time of pickling the objects, and unpickled in a third) and
    what condense's cache keeps."""
    return orjson.dumps([_values_of(call) for call in calls])


def decode_calls(body: bytes) -> list[Usage]:
    """The calls `encode_calls` wrote; ValueError or TypeError for a body it did not."""
    return [Usage(*values) for values in orjson.loads(body)]


def count(usage: Mapping[str, Any], key: str) -> int:
    """A token count a log records under `key` (0 when absent, negative or not a count)."""
    value = usage.get(key)
    return value if type(value) is int and value > 0 else 0  # (a bool is not a count)


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction among a log's calls: `after` of them came before it; `call` is its
    own model call (the summariser's), as the log records it, or as it is built from
    what the log says of it (`estimated`), or None where the log says nothing."""

    number: int  # 1 for the log's first condensation, as `audit` and `stats` count them
    after: int
    call: Usage | None = None
    estimated: bool = False
    line: int | None = None  # where the log records it


@dataclass(frozen=True, slots=True)
class Spending:
    """A log's calls to the agent's model, in order, and where its compactions fell
    among them: what `cost`, `stats` and `audit` weigh a compaction by."""

    calls: list[Usage]
    compactions: list[Compaction]


def placed(calls: list[Usage], lines: list[int], own: dict[int, Usage]) -> Spending:
    """The spending of a log whose calls and compactions have lines of one file:
    a compaction at each of `lines`, `own` its own call by its line (`calls` without
    them)."""
    at = sorted(call.line for call in calls if call.line is not None)
    compactions = [
        Compaction(number, bisect.bisect_left(at, line), own.get(line), line=line)
        for number, line in enumerate(lines, start=1)
    ]
    return Spending(calls, compactions)


@dataclass
class Economics:
    """One compaction's figures (or all of a log's, added up)."""

    compactions: int = 0
    own_calls: int = 0  # compactions whose own call the log records (or gives the parts of)
    own_estimated: int = 0
    own_tokens: int = 0
    own_dollars: float = 0.0
    dropped: int = 0  # tokens it took out of the prompt
    calls_after: int = 0
    rewritten: int = 0  # cache writes a read would have served
    rewritten_dollars: float = 0.0
    saved: int = 0  # prompt tokens the calls after it did not send
    saved_dollars: float = 0.0
    unmeasured: int = 0  # compactions with no call before or after them to weigh
    unpriced: set[str] = field(default_factory=set)

    @property
    def net_dollars(self) -> float:
        return self.saved_dollars - self.rewritten_dollars - self.own_dollars

    def add(self, other: Economics) -> None:
        for name in (
            "compactions",
            "own_calls",
            "own_estimated",
            "own_tokens",
            "own_dollars",
            "dropped",
            "calls_after",
            "rewritten",
            "rewritten_dollars",
            "saved",
            "saved_dollars",
            "unmeasured",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.unpriced |= other.unpriced

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "compactions": self.compactions,
            "own_call": {
                "recorded": self.own_calls - self.own_estimated,
                "estimated": self.own_estimated,
                "tokens": self.own_tokens,
                "dollars": round(self.own_dollars, 6),
            },
            "dropped_tokens": self.dropped,
            "calls_after": self.calls_after,
            "cache_rewritten": {
                "tokens": self.rewritten,
                "dollars": round(self.rewritten_dollars, 6),
            },
            "saved": {"tokens": self.saved, "dollars": round(self.saved_dollars, 6)},
            "net_dollars": round(self.net_dollars, 6),
        }
        if self.unmeasured:
            row["unmeasured"] = self.unmeasured
        if self.unpriced:
            row["unpriced_models"] = sorted(self.unpriced)
        return row
