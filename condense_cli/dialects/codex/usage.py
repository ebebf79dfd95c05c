"""The model calls a Codex rollout records: each `token_count` whose running total
moved, its `last_token_usage` (Codex writes a count again without a new call: the
total then stays; and one of no tokens after a compaction), priced on the model of the
`turn_context` before it. Codex's `input_tokens` hold the cached ones; `output_tokens`
hold the reasoning ones.

From 0.171 Codex also writes a `token_usage_record` for every call, before its count:
the call of a remote compaction has a record and no count. A record no count repeats
is a call of its own; the one a `compacted` line follows is that compaction's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import orjson

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.core.usage import COMPACTION, Spending, Usage, count, placed

# the lines read: turn contexts, token counts and records (one search finds both),
# compactions; each is parsed and its type checked
WANTED = (b'"turn_context"', b'"token_', b'"compacted"')


def rollout_usage(source: LogSource) -> list[Usage]:
    """Each call of the rollout, in its order (its lines searched again, parsed only
    where they hold a turn context, a token count or record, or a compaction)."""
    found: list[Usage] = []
    model = ""
    total: Any = None
    pending: Usage | None = None  # a record no count has repeated yet
    for number, raw in source.lines_with(WANTED):
        try:
            line = orjson.loads(line_body(raw, first=number == 1))
        except orjson.JSONDecodeError:
            continue
        kind = line.get("type") if isinstance(line, dict) else None
        payload = as_dict(line.get("payload") if isinstance(line, dict) else None)
        stamp = line.get("timestamp") if isinstance(line, dict) else None
        when = stamp if isinstance(stamp, str) else ""
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
        elif kind == "token_usage_record":
            if pending is not None:
                found.append(pending)
            pending = _call(when, model, as_dict(payload.get("usage")), number)
        elif kind == "compacted":
            if pending is not None:
                found.append(replace(pending, service=COMPACTION))
            pending = None
        elif payload.get("type") == "token_count":
            info = as_dict(payload.get("info"))
            if not info or info.get("total_token_usage") == total:
                continue
            total = info.get("total_token_usage")
            call = _call(when, model, as_dict(info.get("last_token_usage")), number)
            if call is None:
                continue
            if pending is not None and not _same(pending, call):
                found.append(pending)
            pending = None
            found.append(call)
    if pending is not None:
        found.append(pending)
    return found


def rollout_spending(source: LogSource, compactions: list[tuple[int, bool]]) -> Spending:
    """The rollout's calls and its compactions (each by its line, and whether
    condense wrote it) among them, each with the call its record names."""
    usage = rollout_usage(source)
    calls = [c for c in usage if c.service != COMPACTION]
    own_calls = [c for c in usage if c.service == COMPACTION]
    own = {}
    for line, by_condense in compactions:
        before = [c for c in own_calls if (c.line or 0) < line]
        if before and not by_condense:
            own[line] = before[-1]
            own_calls.remove(before[-1])
    return placed(calls, [line for line, _ in compactions], own)


def _call(when: str, model: str, last: dict[str, Any], number: int) -> Usage | None:
    cached = count(last, "cached_input_tokens")
    given, output = count(last, "input_tokens"), count(last, "output_tokens")
    if not (given or output):
        return None  # no call: the count Codex writes after a compaction
    return Usage(
        when,
        model,
        max(0, given - cached),
        output,
        cache_read=cached,
        line=number,
        # a copy of the rollout (a backup, a copy under another id) holds the
        # same count at the same moment: the same call (ccusage counts it once)
        key=f"{when}:{given}:{cached}:{output}" if when else None,
    )


def _same(record: Usage, counted: Usage) -> bool:
    """Whether a count repeats a record's call (the same tokens)."""
    return (record.input, record.output, record.cache_read) == (
        counted.input,
        counted.output,
        counted.cache_read,
    )
