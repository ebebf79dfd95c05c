"""What the agent forgot, kept searchable: every event of the session's history that
its current view no longer holds, indexed for ranked full-text search (SQLite's FTS5,
in memory) and read back whole.

An event is forgotten when the view does not show it: by its number, which a copy a
compaction kept (Codex's replacement history, `condense run`'s copies) shares with its
original, so MCP counts what `view` counts. Events are placed 1, 2, ... in the order the
agent saw them (for ranges); an event is named by its own id, the number `view`,
`audit` and every other command print for it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from condense_cli.analysis.search import kind_of, text_of
from condense_cli.analysis.search_query import fts_query
from condense_cli.dialects.base import Replay

SNIPPET_TOKENS = 24


@dataclass(frozen=True)
class Forgotten:
    """One forgotten event: its number, the log's id for it, what it is, its text."""

    number: int
    id: str
    kind: str
    text: str

    def heading(self) -> str:
        return f"#{self.id} ({self.kind}, {len(self.text):,} characters)"


class ForgottenIndex:
    """The forgotten events of one replayed session, searchable."""

    def __init__(self, replay: Replay) -> None:
        view = list(replay.view())
        ids = {str(e.id) for e in view}
        self.events: list[Forgotten] = []
        history = replay.history() if replay.simulates else iter(())
        for event in history:
            if event is None or event.is_summary:
                continue
            text = text_of(event)
            if str(event.id) in ids:
                continue
            number = len(self.events) + 1
            self.events.append(Forgotten(number, str(event.id), kind_of(event), text))
        self.by_id = {e.id: e for e in self.events}
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE forgotten USING fts5(body, tokenize='unicode61')")
        self.db.executemany(
            "INSERT INTO forgotten(rowid, body) VALUES (?, ?)",
            ((e.number, e.text) for e in self.events),
        )

    def get(self, key: str | int) -> Forgotten | None:
        """The forgotten event whose id is `key` (`12`, `#12`, 12)."""
        text = str(key).strip()
        return self.by_id.get(text) or self.by_id.get(text.removeprefix("#"))

    def between(self, start: Forgotten, end: Forgotten) -> list[Forgotten]:
        """The forgotten events from `start` to `end`, both included, in the order the
        agent saw them."""
        first, last = sorted((start.number, end.number))
        return self.events[first - 1 : last]

    def search(self, query: str, limit: int) -> list[tuple[Forgotten, str]]:
        """The events that best match `query` (its words, any order; best first),
        each with a snippet around the match."""
        match = fts_query(query)
        if match is None:
            return []
        rows = self.db.execute(
            "SELECT rowid, snippet(forgotten, 0, '[', ']', ' … ', ?) FROM forgotten "
            "WHERE forgotten MATCH ? ORDER BY bm25(forgotten) LIMIT ?",
            (SNIPPET_TOKENS, match, limit),
        ).fetchall()
        return [(self.events[rowid - 1], snippet) for rowid, snippet in rows]
