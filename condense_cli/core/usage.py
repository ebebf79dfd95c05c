"""A model call a log records, with the tokens it used: what `condense cost` prices."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Usage:
    """One call's tokens, as the log records them. `input` is the input neither read
    from nor written to the prompt cache; `cache_write` the 5-minute writes and
    `cache_write_1h` the one-hour ones (priced apart)."""

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

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_write_1h + self.cache_read

    @property
    def prompt(self) -> int:
        """The tokens of the prompt: what a long-context price tier is judged by."""
        return self.input + self.cache_write + self.cache_write_1h + self.cache_read


def count(usage: Mapping[str, Any], key: str) -> int:
    """A token count a log records under `key` (0 when absent, negative or not a count)."""
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
