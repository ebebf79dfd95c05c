"""Reading a session, and its active chain: from the newest main-chain message back
through `parentUuid` to the latest compaction, with preserved segments spliced in and
parallel tool calls put back into their turn."""

from __future__ import annotations

from dataclasses import dataclass

from condense_cli.core.errors import ConfigError
from condense_cli.core.logfile import LogSource
from condense_cli.dialects.claude_code.events import MESSAGE_TYPES
from condense_cli.dialects.claude_code.lines import Line, Session, line_number, tool_blocks
from condense_cli.fast import lines as fastlines


def read_session(source: LogSource, *, upto: str | None = None, collect: bool = False) -> Session:
    """Parse and index the session; bad lines raise LogError unless `collect`.

    Sessions of `FAST_MIN_BYTES` or more (up to `--upto`, a line position) are read in
    blocks (`claude_code.fast`), but for their last unfinished line.
    """
    session = Session(source.path)
    limit = _line_limit(upto)
    done = offset = 0  # lines read in blocks, and where they end
    if source.size >= fastlines.FAST_MIN_BYTES:
        end = fastlines.lines_end(source.file, source.size, limit)
        if end >= fastlines.FAST_MIN_BYTES:
            from condense_cli.dialects.claude_code.fast import read_blocks

            with fastlines.collector_paused():
                done, offset = read_blocks(session, source, collect, end)
    for number, raw in enumerate(source.raw_lines(offset), start=done + 1):
        if limit is not None and number > limit:
            break
        session.read(number, raw, collect)
    if upto is not None and limit is None:
        line = session.by_uuid.get(upto)
        if line is None:
            raise ConfigError(f"--upto {upto!r}: no line of {source.path} has this uuid")
        session.lines = [x for x in session.lines if x.number <= line.number]
        session.by_uuid = {k: v for k, v in session.by_uuid.items() if v.number <= line.number}
    return session


def _line_limit(upto: str | None) -> int | None:
    if upto is None or not upto.isdigit():
        return None
    value = int(upto)
    if value < 1:
        raise ConfigError(f"--upto {upto!r}: a line position starts at 1")
    return value


@dataclass
class Chain:
    """The active chain: its lines in the order the client sends them."""

    lines: list[Line]
    boundary: Line | None
    dangling: Line | None = None  # a line whose parent is missing (the chain stops there)


def leaf_of(session: Session) -> Line | None:
    """The newest main-chain message."""
    for line in reversed(session.lines):
        if line.type in MESSAGE_TYPES and not line.sidechain:
            return line
    return None


def walk(session: Session, start: Line | None, stop_at: str | None = None) -> Chain:
    """From `start` back through `parentUuid` to the first boundary (or `stop_at`)."""
    found: list[Line] = []
    seen: set[int] = set()
    line, boundary, dangling = start, None, None
    while line is not None and line.number not in seen:
        seen.add(line.number)
        if line.is_boundary:
            boundary = line
            break
        found.append(line)
        if line.uuid == stop_at:
            break
        parent = line.parent
        if parent is None:
            break
        following = session.by_uuid.get(parent)
        if following is None:  # check reports it; a view piped through jsonl needs the bridge
            dangling = line
            following = session.line_before(line)
        line = following
    found.reverse()
    return Chain(found, boundary, dangling)


def active_chain(session: Session, leaf: Line | None = None) -> Chain:
    """The lines the client sends, in order (see the module's docstring)."""
    chain = walk(session, leaf if leaf is not None else leaf_of(session))
    segment = preserved_segment(chain.boundary)
    if segment is not None:
        head, anchor, tail = segment
        # the kept messages follow their anchor: the summary ("summarize up to here"),
        # or the boundary itself, before the summary ("summarize from here")
        on_boundary = chain.boundary is not None and chain.boundary.uuid == anchor
        at = next((i for i, x in enumerate(chain.lines) if x.uuid == anchor), None)
        kept = walk(session, session.by_uuid.get(tail), stop_at=head).lines
        if (at is not None or on_boundary) and kept and kept[0].uuid == head:
            members = {x.number for x in kept}
            rest = [x for x in chain.lines if x.number not in members]
            at = next((i for i, x in enumerate(rest) if x.uuid == anchor), -1)
            lines = _with_siblings(session, rest[: at + 1]) + kept
            lines += _with_siblings(session, rest[at + 1 :])
            return Chain(lines, chain.boundary, chain.dangling)
    return Chain(_with_siblings(session, chain.lines), chain.boundary, chain.dangling)


def preserved_segment(boundary: Line | None) -> tuple[str, str, str] | None:
    meta = boundary.data.get("compactMetadata") if boundary is not None else None
    segment = meta.get("preservedSegment") if isinstance(meta, dict) else None
    if not isinstance(segment, dict):
        return None
    parts = (segment.get("headUuid"), segment.get("anchorUuid"), segment.get("tailUuid"))
    return parts if all(isinstance(p, str) for p in parts) else None  # type: ignore[return-value]


def _with_siblings(session: Session, lines: list[Line]) -> list[Line]:
    """Put back the parallel tool calls of a response that hang off a side branch.

    For each response (`message.id`) in the chain: its assistant lines that are
    not on the chain, and the tool results chained on any of its lines that are
    not on the chain either, join the turn (the response's lines and the user
    lines after them), in file order. A response that comes back later in the
    chain takes no more lines. The work grows with the chain, not the session:
    the side lines are indexed once per session (`Session.side_of`).
    """
    on_chain = {x.number for x in lines}
    side = session.side_of(on_chain)
    if not side:
        return lines
    taken: set[str] = set()  # the responses that already had their turn
    out: list[Line] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        response = line.message_id
        if line.type != "assistant" or response is None:
            out.append(line)
            i += 1
            continue
        end = i + 1
        while end < len(lines) and (
            lines[end].type != "assistant" or lines[end].message_id == response
        ):
            end += 1
        turn = lines[i:end]
        extra: list[Line] = []
        if response not in taken:
            taken.add(response)
            extra = [x for x in side.of_response(response) if x.number not in on_chain]
        answered: set[str] | None = None  # the calls the turn answers, made when needed
        for member in [x for x in turn if x.type == "assistant"] + extra:
            for result in side.results_of(member.uuid or ""):
                if result.number in on_chain:
                    continue
                calls = _result_ids(result)
                if answered is None:
                    answered = {call for x in turn for call in _result_ids(x)}
                if calls and not calls & answered:
                    extra.append(result)
                    answered |= calls
        out += sorted(turn + extra, key=line_number) if extra else turn
        i = end
    return out


def _result_ids(line: Line) -> set[str]:
    if not line.tools:
        return set()
    return {call for use, call in tool_blocks(line.tools) if not use and isinstance(call, str)}
