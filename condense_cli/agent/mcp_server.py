"""`condense mcp`: an MCP server (stdio, the official `mcp` SDK) that lets the agent
read back what its compactions made it forget, from the session it is running in.

Tools: `search_forgotten` (ranked full-text search), `read_forgotten` (an event, or
a range, whole and exact), `list_compactions` (each with what it lost that matters),
`list_pins`; and over the project's other sessions, of any client, `search_history`
(`condense search`'s index, in condense's cache) and `read_event` (one event of one
of them, paged). Every answer is at most `MAX_ANSWER` characters and says where it was
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

from condense_cli.agent.memory import Forgotten, ForgottenIndex
from condense_cli.dialects.base import Replay

MAX_ANSWER = 20_000
MAX_RESULTS = 20
MAX_QUERY = 2_000  # characters of a search: words enough for any question
INSTRUCTIONS = (
    "condense reads the log of this session. When a compaction has replaced earlier "
    "events with a summary, these tools find them again: search_forgotten to look for "
    "words in what was forgotten, read_forgotten to read an event back exactly, "
    "list_compactions for what each compaction lost, list_pins for the facts pinned. "
    "search_history looks in this project's earlier sessions, read_event reads one "
    "event of one of them back."
)


class Unanswered(Exception):
    """A tool's answer that says why it could not look (no session found, a bad log)."""


@dataclass
class Session:
    """The session the server answers for: found again on every call (`locate`),
    replayed only when its file changed."""

    locate: Callable[[], Path]
    _key: tuple[str, int, float] | None = None
    _memory: ForgottenIndex | None = None
    _replay_facts: dict[str, Any] | None = None

    def memory(self) -> tuple[Path, ForgottenIndex]:
        """The session's file and what it forgot; a `CondenseError` (no session, a bad
        log) is raised as an `Unanswered` the tools say in words."""
        from condense_cli.core.errors import CondenseError

        try:
            return self._memory_of()
        except CondenseError as exc:
            hint = f" ({exc.hint})" if exc.hint else ""
            raise Unanswered(f"condense: {exc.message}{hint}") from None

    def _memory_of(self) -> tuple[Path, ForgottenIndex]:
        import stat as kinds

        from condense_cli.dialects import read_log

        path = self.locate()
        try:
            stat = path.stat()
        except OSError as exc:
            raise Unanswered(f"condense: {path}: cannot be read ({exc.strerror})") from None
        if not kinds.S_ISREG(stat.st_mode) and not kinds.S_ISDIR(stat.st_mode):
            raise Unanswered(f"condense: {path}: is not a session log (not a regular file)")
        key = (str(path), stat.st_size, stat.st_mtime)
        if self._memory is None or key != self._key:
            with read_log(str(path)) as replay:
                self._memory = ForgottenIndex(replay)
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


def _too_long(query: str) -> str | None:
    """Why a search of `query` is refused: too long (None: it is not)."""
    if len(query) <= MAX_QUERY:
        return None
    return (
        f"the query is {len(query):,} characters; search with at most {MAX_QUERY:,} "
        "(the words that matter)"
    )


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


def _found(memory: ForgottenIndex, key: object) -> Forgotten | str:
    """The forgotten event `key` names, or what to say when none is."""
    found = memory.get(str(key))
    if found is None:
        shown = str(key)[:80]
        return f"no forgotten event #{shown} ({len(memory.events):,} events forgotten)"
    return found


def clean(text: str) -> str:
    """`text` with any lone surrogate (valid in JSON, not in UTF-8) as `?`: a request
    holding one was never answered."""
    return text.encode("utf-8", "replace").decode("utf-8")


def answering(tool: Callable[..., str]) -> Callable[..., str]:
    """`tool`, its text arguments and answer cleaned (`clean`), answering in words
    when the session cannot be read."""

    @functools.wraps(tool)
    def answer(*args: Any, **kwargs: Any) -> str:
        kwargs = {k: clean(v) if isinstance(v, str) else v for k, v in kwargs.items()}
        try:
            return clean(tool(*args, **kwargs))
        except Unanswered as exc:
            return clean(str(exc))

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
        from condense_cli.core.text import quote

        too_long = _too_long(query)
        if too_long is not None:
            return too_long
        _, memory = session.memory()
        hits = memory.search(query, max(1, min(limit, MAX_RESULTS)))
        if not hits:
            forgotten = len(memory.events)
            return f"nothing forgotten matches {quote(query)} ({forgotten:,} events forgotten)"
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
        structured_output=False,
        name="search_history",
        description="Search this project's other sessions (earlier ones, of any agent: "
        "best matches first): each hit gives the session and the event's id for "
        "read_event, who wrote it, when, whether that session still shows it, and a "
        "snippet.",
    )
    @answering
    def search_history(query: str, limit: int = 8) -> str:
        from condense_cli.analysis.search import project_history
        from condense_cli.core.text import plural, quote

        too_long = _too_long(query)
        if too_long is not None:
            return too_long
        path, _ = session.memory()
        index, logs = project_history(path)
        try:
            hits = list(index.search(query, logs, max(1, min(limit, MAX_RESULTS))))
        finally:
            index.close()
        if not hits:
            others = plural(len(logs), "other session")
            return f"nothing in the project's {others} matches {quote(query)}"
        lines = [
            f"{hit.log} #{hit.row.id} ({hit.row.who}, {hit.row.kind}"
            + (f", {hit.row.when[:16]}" if hit.row.when else "")
            + (", forgotten" if hit.row.forgotten else "")
            + f"): {' '.join(hit.snippet.split())}"
            for hit in hits
        ]
        return bounded("\n".join(lines))

    @server.tool(
        structured_output=False,
        name="read_event",
        description="Read one event of another session of this project back (as "
        "search_history names it: the session's path and the event's id); `offset` "
        "reads on in a long answer.",
    )
    @answering
    def read_event(session_path: str, event: int | str, offset: int = 0) -> str:
        from condense_cli.analysis.search import project_history

        if offset < 0:
            return f"offset must be 0 or more (got {offset})"
        path, _ = session.memory()
        index, logs = project_history(path)
        try:
            found = index.event(session_path, str(event).strip().removeprefix("#"), logs)
        finally:
            index.close()
        if found is None:
            return (
                f"no event {event} in a session of this project named {session_path} "
                "(search_history names both)"
            )
        return bounded(
            f"{session_path} #{found.id} ({found.who}, {found.kind})\n{found.text}", offset
        )

    @server.tool(
        structured_output=False, name="list_pins", description="The facts pinned for this session."
    )
    @answering
    def list_pins() -> str:
        pins = session.facts()["pins"]
        return bounded("\n".join(pins)) if pins else "no pins"

    return server


# --- the wire ---------------------------------------------------------------------------


def serve(server: Any) -> None:
    """Run `server` (from `build`) on stdin and stdout until stdin closes. A line that
    is no JSON-RPC message gets the protocol's error (-32700 when it is not JSON,
    -32600 when it is no request), where the SDK would pass it by without a word."""
    import anyio

    anyio.run(_serve, server)


async def _serve(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    lowlevel = server._lowlevel_server  # what the SDK's own run_stdio_async runs
    async with stdio_server() as (incoming, outgoing):
        await lowlevel.run(
            Answered(incoming, outgoing), outgoing, lowlevel.create_initialization_options()
        )


class Answered:
    """The server's incoming messages, with each line the transport could not read as
    a JSON-RPC message answered at once with its error and left out."""

    def __init__(self, incoming: Any, outgoing: Any) -> None:
        self.incoming = incoming
        self.outgoing = outgoing

    @property
    def last_context(self) -> Any:  # the sender's context, which the SDK carries on
        return getattr(self.incoming, "last_context", None)

    async def __aenter__(self) -> Answered:
        await self.incoming.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.incoming.__aexit__(*exc)

    async def receive(self) -> Any:
        while True:
            item = await self.incoming.receive()
            if not isinstance(item, Exception):
                return item
            message = _with_surrogates_cleaned(item)
            if message is not None:
                return message
            await self.outgoing.send(_error_for(item))

    async def aclose(self) -> None:
        await self.incoming.aclose()

    def __aiter__(self) -> Answered:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def _errors(problem: Exception) -> list[dict[str, Any]]:
    """What pydantic found wrong with a line the transport could not read."""
    found = getattr(problem, "errors", None)
    return list(found()) if callable(found) else []


def _with_surrogates_cleaned(problem: Exception) -> Any:
    """The message of a line the SDK refused only for a lone surrogate (`"\\ud800"`,
    valid JSON its parser does not take), with each such one as `?`; else None."""
    import json

    from mcp.shared.message import SessionMessage
    from mcp_types import jsonrpc_message_adapter

    errors = _errors(problem)
    line = errors[0].get("input") if errors and errors[0].get("type") == "json_invalid" else None
    if not isinstance(line, str):
        return None
    try:
        again = clean(json.dumps(json.loads(line), ensure_ascii=False))
        return SessionMessage(jsonrpc_message_adapter.validate_json(again, by_name=False))
    except Exception:  # still no message: answered as one
        return None


def _error_for(problem: Exception) -> Any:
    """The JSON-RPC error answering a line that was not a message: -32700 for one that
    is not JSON, else -32600, with the request's id when it has one."""
    from mcp.shared.message import SessionMessage
    from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError

    errors = _errors(problem)
    not_json = not errors or any(e.get("type") == "json_invalid" for e in errors)
    request_id = None
    for found in errors:
        given = found.get("input")
        if isinstance(given, dict) and type(given.get("id")) in (int, str):
            request_id = given["id"]
            break
    error = (
        ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
        if not_json
        else ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message")
    )
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
