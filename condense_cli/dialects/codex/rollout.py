"""Reading a whole rollout: every line fed to a `Reader` in order, a block at a time
by the fast path (`codex.fast`) for big rollouts, line by line otherwise and for the
last unfinished line; the reader can be paused whenever it has something waiting."""

from __future__ import annotations

from collections.abc import Iterator

import orjson

from condense_cli.core.errors import ConfigError
from condense_cli.core.events import Problem
from condense_cli.core.logfile import LogSource
from condense_cli.dialects.codex.reading import History, Reader, line_at
from condense_cli.fast import lines as fastlines


def read_rollout(
    source: LogSource, upto: str | None, collect: bool
) -> tuple[History, list[Problem], int]:
    """Validate and replay a rollout; return its state, problems and lines read."""
    reader = Reader(source.path, collect)
    lines = read_lines(reader, source, upto)
    if lines == 0 and not reader.problems:
        reader.problem(None, "the file is empty; a Codex rollout has one JSON object per line")
    state = reader.state
    if state.unnumbered is not None and upto is None:
        reader.flaw(
            state.unnumbered,
            "the final line of this paginated rollout has no ordinal: Codex refuses to "
            'resume it ("final paginated rollout record ... is missing an ordinal")',
        )
    if state.odd_ordinals > 1 and upto is None:
        reader.note(None, f"{state.odd_ordinals:,} lines in all have an odd ordinal")
    reader.check_pairs()
    return reader.state, reader.problems, lines


def read_lines(reader: Reader, source: LogSource, upto: str | None) -> int:
    """Feed every line (up to `upto`) to `reader`; return how many were read (a big
    rollout is decoded in two processes)."""
    for _ in feed_lines(reader, source, upto, split=True):
        pass
    return reader.lines


def feed_lines(
    reader: Reader,
    source: LogSource,
    upto: str | None,
    begin: tuple[int, int] = (0, 0),
    split: bool = False,
) -> Iterator[None]:
    """Feed every line (up to `upto`) to `reader`, pausing whenever it has steps or
    items waiting, for the caller to take them (and so hold no more than a step).
    `begin`: the offset of the first line fed, and the number of the lines before it;
    `split`: decode a big rollout in two processes (`codex.fast`), for a read that
    nothing else runs beside (not a walk of `audit`'s, whose two processes each read)."""
    limit, wanted = _parse_upto(upto)
    found = wanted is None
    offset, done = begin  # where the line starts; lines read before it
    if wanted is None and source.size >= fastlines.FAST_MIN_BYTES:  # (up to a line, or all)
        from condense_cli.dialects.codex.fast import feed_blocks

        offset = yield from feed_blocks(reader, source, begin, split, limit)
        done = reader.lines
    for number, raw in enumerate(source.raw_lines(offset), start=done + 1):
        if limit is not None and number > limit:
            break
        reader.lines = number
        start, offset = offset, offset + len(raw)
        body, at = line_at(source, number, raw, start)
        if not body.strip():
            continue
        if not raw.endswith(b"\n") and not _complete(body):
            reader.problem(number, "the last line is cut off (torn write); it is not read")
            continue
        data = reader.read_line(number, body, at)
        if wanted is not None and isinstance(data, dict):
            payload = data.get("payload")
            if isinstance(payload, dict) and wanted in (payload.get("id"), payload.get("call_id")):
                found = True
        if reader.steps or reader.sent:
            yield
        if found and wanted is not None:
            break
    if not found:
        raise ConfigError(f"--upto {upto}: {source.path} has no item with this id")


def _complete(body: bytes) -> bool:
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    return True


def _parse_upto(upto: str | None) -> tuple[int | None, str | None]:
    """`--upto`: a line number, or the id of an item (`msg_…`, a call id)."""
    if upto is None:
        return None, None
    if upto.isdigit():
        return int(upto), None
    return None, upto
