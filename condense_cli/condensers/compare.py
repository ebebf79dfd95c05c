"""`simulate --compare`: configurations side by side over many logs, a row each.

Each log's history is replayed under every configuration (`simulate`), priced as the
log's turns (`in_dollars`), and the facts of the whole history (as `audit` extracts
them) are looked up in the view the configuration leaves at the end: in its summaries
or its events. A configuration's row adds its logs up; the rows are ranked by dollars
(by the tokens sent where a log's model has no price).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from condense_cli.analysis.audit import check_facts, total
from condense_cli.analysis.facts import extract
from condense_cli.condensers.simulate import Priced, Run
from condense_cli.core.events import Event


@dataclass
class Standing:
    """One configuration's figures over the logs it ran on."""

    label: str
    logs: int = 0
    calls: int = 0  # the agent's, at the logs' turns
    prompt: int = 0  # tokens those calls sent
    cache_read: int = 0  # of them, read from the prompt cache
    condensations: int = 0
    summariser_tokens: int = 0  # prompts and answers
    facts: int = 0  # of the histories
    kept: int = 0  # of them, in the final view (its summaries or its events)
    dollars: float = 0.0  # the agent's calls and the summariser's
    uncondensed: float = 0.0  # the same histories with no condensation
    priced: int = 0  # logs whose dollars are known
    unpriced: set[str] = field(default_factory=set)

    def add(self, other: Standing) -> None:
        for name in (
            "logs",
            "calls",
            "prompt",
            "cache_read",
            "condensations",
            "summariser_tokens",
            "facts",
            "kept",
            "dollars",
            "uncondensed",
            "priced",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.unpriced |= other.unpriced

    @property
    def cached_share(self) -> float | None:
        return self.cache_read / self.prompt if self.prompt else None

    @property
    def kept_share(self) -> float | None:
        return self.kept / self.facts if self.facts else None

    def rank_key(self) -> tuple[float, int]:
        """Cheapest first: dollars where every log is priced, else tokens sent."""
        dollars = self.dollars if self.priced == self.logs else float("inf")
        return dollars, self.prompt + self.summariser_tokens

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {
            "configuration": self.label,
            "logs": self.logs,
            "calls": self.calls,
            "prompt_tokens": self.prompt,
            "cache_read_share": round(self.cached_share, 4) if self.cached_share else None,
            "condensations": self.condensations,
            "summariser_tokens": self.summariser_tokens,
            "facts": self.facts,
            "facts_kept": self.kept,
            "dollars": round(self.dollars, 6) if self.priced else None,
            "uncondensed_dollars": round(self.uncondensed, 6) if self.priced else None,
            "priced_logs": self.priced,
        }
        if self.unpriced:
            row["unpriced_models"] = sorted(self.unpriced)
        return row


def standings(
    history: Sequence[Event | None], runs: list[Run], priced: Priced | None
) -> list[Standing]:
    """Each run of one log's history as a row (its facts looked up in its final view)."""
    facts = extract(e for e in history if e is not None)
    rows = []
    for index, run in enumerate(runs):
        summaries = [e.text for e in run.final if e.is_summary]
        kinds = check_facts(facts, summaries, [e for e in run.final if not e.is_summary])
        every = total(kinds)
        row = Standing(
            run.label,
            logs=1,
            condensations=len(run.fired),
            facts=every.facts,
            kept=every.kept,
        )
        if priced is not None:
            cost = priced.runs[index]
            row.calls, row.prompt, row.cache_read = cost.calls, cost.prompt, cost.cache_read
            row.summariser_tokens = cost.summariser_tokens
            row.unpriced = cost.unpriced | priced.uncondensed.unpriced
            if not row.unpriced:
                row.dollars, row.uncondensed = cost.total, priced.uncondensed.total
                row.priced = 1
        else:
            row.summariser_tokens = run.summariser_tokens + run.summariser_output
        rows.append(row)
    return rows


def ranked(rows: list[Standing]) -> list[Standing]:
    """The rows, cheapest first (`Standing.rank_key`)."""
    return sorted(rows, key=Standing.rank_key)
