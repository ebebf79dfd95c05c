"""A Claude Code session's lines, parsed lazily, and the session they make: its lines
in order, by uuid, and the side branches a chain may take lines back from."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from condense_cli.core.errors import LogError
from condense_cli.core.events import Problem
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.dialects.claude_code.events import (
    BOUNDARY,
    COPY_OF,
    MESSAGE_TYPES,
    TREE_TYPES,
    BadLine,
)

SPAN = 1 << 40  # `Line.span`: a line's start in the log times this, plus its length
# `Line.flags`: a compact boundary, `isSidechain`, `isCompactSummary`, `condenseCopyOf`,
# a `tool_use` block whose id is not a string (which `Line.tools` leaves out)
BOUNDARY_BIT, SIDECHAIN_BIT, SUMMARY_BIT, COPY_BIT, ODD_USE_BIT = 1, 2, 4, 8, 16


def line_flags(
    boundary: bool, sidechain: bool, compact_summary: bool, copy: bool, odd_use: bool
) -> int:
    """`Line.flags`: a compact boundary, `isSidechain`, `isCompactSummary`,
    `condenseCopyOf` and a `tool_use` block without a string id, one bit each."""
    if not (boundary or sidechain or compact_summary or copy or odd_use):
        return 0  # most lines: tested first, as it is faster
    return (
        boundary * BOUNDARY_BIT
        | sidechain * SIDECHAIN_BIT
        | compact_summary * SUMMARY_BIT
        | copy * COPY_BIT
        | odd_use * ODD_USE_BIT
    )


class FlagBit:
    """One bit of `Line.flags`, read as a bool."""

    def __init__(self, bit: int) -> None:
        self.bit = bit

    def __get__(self, line: Line, owner: object = None) -> bool:
        return bool(line.flags & self.bit)


class Line:
    """One non-blank line: its position, its bytes, and what the replay reads of it.

    `data` (the parsed object) is parsed from `raw` when first asked for: the fast
    path (`claude_code.fast`) builds lines from a few decoded fields only, and keeps
    where the line is in the log instead of its bytes (`source` and `span`), which are
    read back when asked for, so that memory grows with the lines the replay uses, not
    the log. A line is kept for every line of the session: its fields are few, and
    `Session.add` shares the strings it repeats.
    """

    __slots__ = (
        "_data",
        "_raw",
        "flags",
        "message_id",
        "number",
        "parent",
        "source",
        "span",
        "tools",
        "type",
        "uuid",
    )

    def __init__(
        self,
        number: int,
        raw: bytes | None,
        data: dict[str, Any] | None,
        kind: str,
        uuid: str | None,
        parent: str | None,
        source: LogSource | None,
        span: int,
        flags: int,
        message_id: str | None,
        tools: tuple[Any, ...],
    ) -> None:
        # Positional only, and no default: the fast path makes a line for every line
        # of a big session, and keywords would take a fifth of that time.
        self.number = number
        self._raw = raw
        # When `raw` is not kept: the log, and where the line's bytes are in it, as
        # one number (`SPAN`: a tuple of two would take three times the memory).
        self.source = source
        self.span = span
        self._data = data
        self.type = kind  # "" when the line has no type string
        self.uuid = uuid
        self.parent = parent
        self.flags = flags  # `line_flags`: one slot, not four (a line is kept per line)
        self.message_id = message_id
        # The tool blocks of a content list, in order, flat: True, id for a `tool_use`
        # with a string id, False, its `tool_use_id` for a `tool_result` (one tuple
        # of two for a line with one block, not a tuple holding one); `tool_blocks`
        # gives them in pairs.
        self.tools = tools

    @classmethod
    def parsed(cls, number: int, data: dict[str, Any], raw: bytes) -> Line:
        """A line the exact path parsed (and `parse_line` accepted)."""
        message = data.get("message")
        message = message if isinstance(message, dict) else {}
        content = message.get("content")
        tools: list[Any] = []
        odd_use = False
        if isinstance(content, list):
            for b in content:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use":
                    if isinstance(b.get("id"), str):
                        tools += (True, b["id"])
                    else:
                        odd_use = True
                elif b.get("type") == "tool_result":
                    tools += (False, b.get("tool_use_id"))
        kind, uuid, parent, message_id = (
            data.get("type"),
            data.get("uuid"),
            data.get("parentUuid"),
            message.get("id"),
        )
        kind = kind if isinstance(kind, str) else ""
        flags = line_flags(
            kind == "system" and data.get("subtype") == BOUNDARY,
            data.get("isSidechain") is True,
            data.get("isCompactSummary") is True,
            COPY_OF in data,
            odd_use,
        )
        return cls(
            number,
            raw,
            data,
            kind,
            uuid if isinstance(uuid, str) else None,
            parent if isinstance(parent, str) else None,
            None,
            0,
            flags,
            message_id if isinstance(message_id, str) else None,
            tuple(tools),
        )

    is_boundary = FlagBit(BOUNDARY_BIT)  # a `compact_boundary` system line
    sidechain = FlagBit(SIDECHAIN_BIT)  # `isSidechain` is true
    compact_summary = FlagBit(SUMMARY_BIT)  # `isCompactSummary` is true
    copy = FlagBit(COPY_BIT)  # the line has a `condenseCopyOf` key
    odd_use = FlagBit(ODD_USE_BIT)  # a `tool_use` block has no string id

    @property
    def raw(self) -> bytes:
        """The line's bytes (without its newline), read back from the log if not kept."""
        raw = self._raw
        if raw is None:
            start, length = divmod(self.span, SPAN)
            raw = self.source.read_at(start, start + length)  # type: ignore[union-attr]
        return raw

    @property
    def size(self) -> int:
        """The line's bytes, without its newline (not read for this)."""
        raw = self._raw
        return self.span % SPAN if raw is None else len(raw)

    @property
    def data(self) -> dict[str, Any]:
        """The parsed line (parsed now if the fast path read it, and kept)."""
        data = self._data
        if data is None:
            data = self._data = orjson.loads(self.raw)
        return data

    def parse(self) -> dict[str, Any]:
        """The parsed line, not kept when the fast path read it (a line read once)."""
        data = self._data
        return data if data is not None else orjson.loads(self.raw)

    @property
    def is_result(self) -> bool:
        """Whether a block is a `tool_result` (`tools` holds every one)."""
        return any(use is False for use in self.tools[::2])

    @property
    def first_call(self) -> str | None:
        """The call the line pairs by: its first `tool_use`'s id, else its first
        `tool_result`'s `tool_use_id` when a string (`ClaudeEvent.tool_call_id`, read
        from `tools` without a parse). Not for an `odd_use` line: its first `tool_use`
        may be one `tools` leaves out."""
        tools = self.tools
        if not tools:
            return None
        uses = tools[::2]
        if True in uses:
            found: str = tools[2 * uses.index(True) + 1]
            return found
        call = tools[1]
        return call if isinstance(call, str) else None


def line_problem(kind: Any, uuid: Any, parent: Any, message: bool, content: Any) -> str | None:
    """What is wrong with a session line, from its `type`, `uuid`, `parentUuid`,
    whether its `message` is an object and that message's `content` (None: nothing).
    The one statement of these rules, for the exact path and the fast path."""
    if not isinstance(kind, str):
        return 'has no "type" string'
    if kind in TREE_TYPES:
        if not isinstance(uuid, str):
            return f'a {kind} line needs a "uuid" string'
        if parent is not None and not isinstance(parent, str):
            return '"parentUuid" must be a string or null'
    if kind in MESSAGE_TYPES:
        if not message:
            return f'a {kind} line needs a "message" object'
        if not isinstance(content, str | list):
            return '"message.content" must be a string or an array of blocks'
    return None


def parse_line(raw: bytes) -> dict[str, Any]:
    """One line as a session line, or BadLine."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadLine(f"invalid JSON: {str(exc).split(':')[0]}") from None
    if not isinstance(data, dict):
        raise BadLine("expected a JSON object")
    message = data.get("message")
    is_object = isinstance(message, dict)
    content = message.get("content") if isinstance(message, dict) else None
    wrong = line_problem(
        data.get("type"), data.get("uuid"), data.get("parentUuid"), is_object, content
    )
    if wrong is not None:
        raise BadLine(wrong)
    return data


class SideLines:
    """The lines of the main session (not `isSidechain`) that a chain can take back
    from a side branch, in file order: assistant lines by their response
    (`message.id`), and user lines holding a tool result by their `parentUuid`.

    A key with one line (most have one) holds the line itself, not a list of one.
    """

    def __init__(self, lines: Iterable[Line]) -> None:
        self._by_message: dict[str, Line | list[Line]] = {}
        self._results: dict[str, Line | list[Line]] = {}
        for line in lines:
            if line.sidechain:
                continue
            if line.type == "assistant" and line.message_id is not None:
                _index(self._by_message, line.message_id, line)
            elif line.type == "user" and line.parent is not None and line.is_result:
                _index(self._results, line.parent, line)

    def __bool__(self) -> bool:
        return bool(self._by_message or self._results)

    def of_response(self, message_id: str) -> Sequence[Line]:
        """The assistant lines of the response `message_id`."""
        return _held(self._by_message, message_id)

    def results_of(self, uuid: str) -> Sequence[Line]:
        """The user lines holding a tool result whose parent is the line `uuid`."""
        return _held(self._results, uuid)


def _index(index: dict[str, Line | list[Line]], key: str, line: Line) -> None:
    held = index.get(key)
    if held is None:
        index[key] = line
    elif type(held) is list:
        held.append(line)
    else:
        index[key] = [held, line]  # type: ignore[list-item]


def _held(index: dict[str, Line | list[Line]], key: str) -> Sequence[Line]:
    held = index.get(key)
    if held is None:
        return ()
    return held if type(held) is list else (held,)  # type: ignore[return-value]


def tool_blocks(tools: tuple[Any, ...]) -> Iterable[tuple[bool, Any]]:
    """A line's `tools` in pairs: (True, id) for a `tool_use` with a string id, (False,
    its `tool_use_id`) for a `tool_result`."""
    if len(tools) == 2:  # one block, as most lines have: the pair itself
        return (cast(tuple[bool, Any], tools),)
    return zip(tools[::2], tools[1::2], strict=True)


def _shared(tools: tuple[Any, ...], earlier: tuple[Any, ...]) -> tuple[Any, ...]:
    """`tools` (of `Line`) with the ids `earlier` holds as `earlier`'s strings."""
    ids = {call: call for call in earlier[1::2] if type(call) is str}  # (a result's may not be)
    return tuple(ids.get(x, x) if type(x) is str else x for x in tools)


OWN_SIDES = 2  # chains that may index their own side lines (`Session.side_of`)


def line_number(line: Line) -> int:
    return line.number


@dataclass
class Session:
    """Every line of a session (up to `--upto`), indexed by uuid."""

    path: str
    lines: list[Line] = field(default_factory=list)
    by_uuid: dict[str, Line] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    size: int = 0
    _side: SideLines | None = None
    _own_sides: int = 0  # the chains that indexed their own side lines (`side_of`)
    _message_id: str | None = None  # the last line's `message_id`
    _types: dict[str, str] = field(default_factory=dict)  # each `type` string, once
    # what a walk of every line (`stats`'s) kept of the assistant lines, for their calls
    call_lines: list[tuple[int, tuple[Any, ...]]] | None = None

    def add(self, line: Line) -> None:
        """`line`, last; the strings it repeats of earlier lines (its type, its parent's
        uuid, its message's id) are the earlier lines' own, so that each is held once."""
        self.lines.append(line)
        line.type = self._types.setdefault(line.type, line.type)
        parent = self.by_uuid.get(line.parent) if line.parent is not None else None
        if parent is not None:
            line.parent = parent.uuid
            if line.tools and parent.tools:  # the results of its parent's calls
                line.tools = _shared(line.tools, parent.tools)
        message_id = line.message_id
        if message_id is not None and message_id == self._message_id:
            line.message_id = self._message_id
        self._message_id = message_id
        key = line.uuid
        if key is not None and line.type in TREE_TYPES:
            first = self.by_uuid.get(key)
            if first is not None:
                self.problem(line.number, f"duplicate uuid {key} (first on line {first.number})")
            self.by_uuid[key] = line

    def position(self, line: Line) -> int:
        """Where `line` is in `lines` (found by its number: they increase down the list)."""
        return bisect_left(self.lines, line.number, key=line_number)

    def line_before(self, line: Line) -> Line | None:
        """The nearest earlier line that belongs to the tree (has a uuid)."""
        lines = self.lines
        for at in range(self.position(line) - 1, -1, -1):
            earlier = lines[at]
            if earlier.uuid is not None and earlier.type in TREE_TYPES:
                return earlier
        return None

    def side_of(self, on_chain: set[int]) -> SideLines:
        """The lines `_with_siblings` may put back into a chain whose lines' numbers
        are `on_chain`: all but that chain's own. A chain that holds most of the
        session (one never compacted) indexes the few lines off it for itself, twice
        at most (the view, and the view a recorded request is checked against);
        other chains share an index of every line, made once. The shared index holds
        lines the chain holds too, which it skips: both give the same lines."""
        if self._side is not None:
            return self._side
        if self._own_sides < OWN_SIDES and 2 * len(on_chain) >= len(self.lines):
            self._own_sides += 1
            return SideLines(x for x in self.lines if x.number not in on_chain)
        self._side = SideLines(self.lines)
        return self._side

    def problem(self, line: int | None, message: str, severity: str = "error") -> None:
        self.problems.append(Problem(line, message, severity))

    def read(self, number: int, raw: bytes, collect: bool) -> None:
        """The exact path for line `number` as read (newline included): a bad line
        raises LogError, or with `collect` is listed as a problem."""
        self.size += len(raw)
        body = line_body(raw, first=number == 1)
        if not body.strip():
            return
        try:
            data = parse_line(body)
        except BadLine as exc:
            if not collect:
                raise LogError(self.path, str(exc), number) from None
            self.problem(number, str(exc))
            return
        self.add(Line.parsed(number, data, body))
