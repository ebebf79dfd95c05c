"""`condense mcp`: an MCP server (stdio, the official `mcp` SDK) that lets the agent
read back what its compactions made it forget, from the session it is running in.

Tools: `search_forgotten` (ranked full-text search), `read_forgotten` (an event, or
a range, whole and exact), `list_compactions` (each with what it lost that matters),
`list_pins`. Every answer is at most `MAX_ANSWER` characters and says where it was
cut and how to read on, as plain text (not structured output: a client would
send the model a JSON wrapping of it). The server only reads: the session file is replayed again
when it changed since the last call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from condense_cli.agent.memory import Forgotten, Memory
from condense_cli.dialects.base import Replay

MAX_ANSWER = 20_000
MAX_RESULTS = 20
INSTRUCTIONS = (
    "condense reads the log of this session. When a compaction has replaced earlier "
    "events with a summary, these tools find them again: search_forgotten to look for "
    "words in what was forgotten, read_forgotten to read an event back exactly, "
    "list_compactions for what each compaction lost, list_pins for the facts pinned."
)


class Unanswered(Exception):
    """A tool's answer that says why it could not look (no session found, a bad log)."""


@dataclass
class Session:
    """The session the server answers for: found again on every call (`locate`),
    replayed only when its file changed."""

    locate: Callable[[], Path]
    _key: tuple[str, int, float] | None = None
    _memory: Memory | None = None
    _replay_facts: dict[str, Any] | None = None

    def memory(self) -> tuple[Path, Memory]:
        """The session's file and what it forgot; a `CondenseError` (no session, a bad
        log) is raised as an `Unanswered` the tools say in words."""
        from condense_cli.core.errors import CondenseError

        try:
            return self._memory_of()
        except CondenseError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            raise Unanswered(f"condense: {exc.message}{hint}") from None

    def _memory_of(self) -> tuple[Path, Memory]:
        from condense_cli.dialects import read_log

        path = self.locate()
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime)
        if self._memory is None or key != self._key:
            with read_log(str(path)) as replay:
                self._memory = Memory(replay)
                self._replay_facts = _facts(replay)
            self._key = key
        return path, self._memory

    def facts(self) -> dict[str, Any]:
        self.memory()
        assert self._replay_facts is not None
        return self._replay_facts


def _facts(replay: Replay) -> dict[str, Any]:
    """The compactions (each with what it lost that matters) and the pins."""
    from condense_cli.analysis.audit import audit_log

    compactions: list[str] = []
    if replay.audits:
        for audit in audit_log(replay).condensations:
            lost = [f for f in audit.lost() if f.kind not in ("urls",)]
            said = "; ".join(f"{f.kind}: {f.text}" for f in lost[:8])
            more = f" (and {len(lost) - 8} more)" if len(lost) > 8 else ""
            compactions.append(
                f"line {audit.line}: forgot {audit.forgotten_events:,} events"
                + (f", summary {audit.summary_chars:,} characters" if audit.summary_chars else "")
                + (f"; lost: {said}{more}" if lost else "; lost nothing that matters")
            )
    return {"compactions": compactions, "pins": replay.pins()}


def bounded(text: str, offset: int = 0, limit: int = MAX_ANSWER) -> str:
    """`text` (its secrets masked) from `offset`, at most `limit` characters, saying
    where it was cut."""
    from condense_cli.core.redact import mask

    text = mask(text)
    part = text[offset : offset + limit]
    rest = len(text) - offset - len(part)
    if rest > 0:
        more = offset + len(part)
        part += f"\n[cut by condense: {rest:,} more characters; read on with offset={more}]"
    return part


def _found(memory: Memory, key: object) -> Forgotten | str:
    """The forgotten event `key` names, or what to say when none is."""
    found = memory.get(str(key))
    if found is None:
        shown = str(key)[:80]
        return f"no forgotten event #{shown} ({len(memory.events):,} events forgotten)"
    return found


def answering(tool: Callable[..., str]) -> Callable[..., str]:
    """`tool`, answering in words when the session cannot be read."""

    @functools.wraps(tool)
    def answer(*args: Any, **kwargs: Any) -> str:
        try:
            return tool(*args, **kwargs)
        except Unanswered as exc:
            return str(exc)

    return answer


def build(session: Session) -> Any:
    """The MCP server, its tools bound to `session`."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(name="condense", instructions=INSTRUCTIONS)

    @server.tool(
        structured_output=False,
        name="search_forgotten",
        description="Search the events this session's compactions forgot (best matches "
        "first): each hit gives the event's number for read_forgotten and a snippet.",
    )
    @answering
    def search_forgotten(query: str, limit: int = 8) -> str:
        _, memory = session.memory()
        hits = memory.search(query, max(1, min(limit, MAX_RESULTS)))
        if not hits:
            return f"nothing forgotten matches {query!r} ({len(memory.events):,} events forgotten)"
        lines = [f"{event.heading()}: {snippet}" for event, snippet in hits]
        return bounded("\n".join(lines))

    @server.tool(
        structured_output=False,
        name="read_forgotten",
        description="Read forgotten events back exactly. `event`: the number of one event "
        "(as search_forgotten, list_compactions and condense's view print it: 12 or "
        '"#12"); or `start` and `end` for every forgotten event from one to the other, '
        "both included; `offset` reads on in a long answer.",
    )
    @answering
    def read_forgotten(
        event: int | str | None = None,
        start: int | str | None = None,
        end: int | str | None = None,
        offset: int = 0,
    ) -> str:
        _, memory = session.memory()
        if offset < 0:
            return f"offset must be 0 or more (got {offset})"
        if event is None and start is None and end is None:
            return "name an event (`event`), or a range (`start` and `end`)"
        if event is not None:
            one = _found(memory, event)
            return one if isinstance(one, str) else bounded(f"{one.heading()}\n{one.text}", offset)
        first = _found(memory, start if start is not None else end)
        last = _found(memory, end if end is not None else start)
        for found in (first, last):
            if isinstance(found, str):
                return found
        assert not isinstance(first, str) and not isinstance(last, str)
        whole = "\n\n".join(f"{e.heading()}\n{e.text}" for e in memory.between(first, last))
        return bounded(whole, offset)

    @server.tool(
        structured_output=False,
        name="list_compactions",
        description="Each compaction of this session: where it is, what it forgot, and "
        "what it lost that matters (pins, the user's words, errors, files).",
    )
    @answering
    def list_compactions() -> str:
        path, _ = session.memory()
        found = session.facts()["compactions"]
        if not found:
            return f"{path}: no compaction yet"
        return bounded(f"{path}:\n" + "\n".join(found))

    @server.tool(
        structured_output=False, name="list_pins", description="The facts pinned for this session."
    )
    @answering
    def list_pins() -> str:
        pins = session.facts()["pins"]
        return bounded("\n".join(pins)) if pins else "no pins"

    return server
