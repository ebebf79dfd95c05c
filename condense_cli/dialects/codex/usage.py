"""The model calls a Codex rollout records: each `token_count` whose running total
moved, its `last_token_usage` (Codex writes a count again without a new call: the
total then stays; and one of no tokens after a compaction), priced on the model of the
`turn_context` before it. Codex's `input_tokens` hold the cached ones; `output_tokens`
hold the reasoning ones.

A call is served at the thread's service tier, which Codex writes in its settings
(`thread_settings_applied`: `priority`, which its `fast` asks for, or `flex`).

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

TOTALS = ("total_token_usage", "last_token_usage")  # what a token count's `info` says
DEFAULT_TIERS = frozenset({"default", "auto"})  # a thread's tiers at the standard rates


def rollout_usage(source: LogSource) -> list[Usage]:
    """Each call of the rollout, in its order, without replaying it: a block of whole
    lines at a time, of which only the lines `usage_lines.call_spans` picks are
    parsed."""
    from condense_cli.dialects.codex.usage_lines import call_spans

    calls = Calls()
    number = 1
    for block in source.blocks():
        spans, held = call_spans(block)
        for index, start, end in spans:
            at = number + index  # (orjson reads a CR before the newline as a space)
            raw = block[start:end] if at > 1 else line_body(block[start:end], first=True)
            try:
                data = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(data, dict):
                calls.take(at, data)
        number += held
    return calls.done()


class Calls:
    """The calls of a rollout, from its lines in order: each `take`n line that is a
    turn context, a token count or record, or a compaction (any other is passed over);
    `model` is the last turn context's."""

    def __init__(self) -> None:
        self.found: list[Usage] = []
        self.model = ""
        self.total: Any = None  # the running total of the last count that moved it
        self.pending: Usage | None = None  # a record no count has repeated yet
        self.served = ""  # the thread's service tier, when not the default (`Usage.served`)

    def take(self, number: int, line: dict[str, Any]) -> None:
        kind, payload = line.get("type"), line.get("payload")
        if not isinstance(payload, dict):
            return  # (a line the replay refuses)
        stamp = line.get("timestamp")
        when = stamp if isinstance(stamp, str) else ""
        if kind == "turn_context" and isinstance(payload.get("model"), str):
            self.model = payload["model"]
        elif kind == "token_usage_record":
            if self.pending is not None:
                self.found.append(self.pending)
            usage = as_dict(payload.get("usage"))
            self.pending = _call(when, self.model, usage, number, self.served)
        elif kind == "compacted":
            if self.pending is not None:
                self.found.append(replace(self.pending, service=COMPACTION))
            self.pending = None
        elif kind == "event_msg" and payload.get("type") == "thread_settings_applied":
            tier = as_dict(payload.get("thread_settings")).get("service_tier")
            named = tier if isinstance(tier, str) and tier.isidentifier() else ""
            self.served = named if named not in DEFAULT_TIERS else ""
        elif kind == "event_msg" and payload.get("type") == "token_count":
            info = as_dict(payload.get("info"))
            if not info or info.get("total_token_usage") == self.total:
                return
            self.total = info.get("total_token_usage")
            last = as_dict(info.get("last_token_usage"))
            call = _call(when, self.model, last, number, self.served)
            if call is None:
                return
            if self.pending is not None and not _same(self.pending, call):
                self.found.append(self.pending)
            self.pending = None
            self.found.append(call)

    @staticmethod
    def fields(line: dict[str, Any]) -> dict[str, Any]:
        """What `take` reads of a line (to keep of it, not the whole line: a compaction's
        holds its summary and history)."""
        payload = as_dict(line.get("payload"))
        info = as_dict(payload.get("info"))
        settings = as_dict(payload.get("thread_settings"))
        return {
            "type": line.get("type"),
            "timestamp": line.get("timestamp"),
            "payload": {
                "type": payload.get("type"),
                "model": payload.get("model"),
                "usage": payload.get("usage"),
                "info": {key: info.get(key) for key in TOTALS} if info else None,
                "thread_settings": {"service_tier": settings.get("service_tier")},
            },
        }

    def done(self) -> list[Usage]:
        """The calls taken, the last record no count repeated among them."""
        return self.found if self.pending is None else [*self.found, self.pending]


def rollout_spending(
    source: LogSource, compactions: list[tuple[int, bool]], usage: list[Usage] | None = None
) -> Spending:
    """The rollout's calls (`usage`, when its read took them) and its compactions (each
    by its line, and whether condense wrote it) among them, each with the call its
    record names."""
    usage = rollout_usage(source) if usage is None else usage
    calls = [c for c in usage if c.service != COMPACTION]
    own_calls = [c for c in usage if c.service == COMPACTION]
    own = {}
    for line, by_condense in compactions:
        before = [c for c in own_calls if (c.line or 0) < line]
        if before and not by_condense:
            own[line] = before[-1]
            own_calls.remove(before[-1])
    return placed(calls, [line for line, _ in compactions], own)


def _call(when: str, model: str, last: dict[str, Any], number: int, served: str) -> Usage | None:
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
        served=served,
    )


def _same(record: Usage, counted: Usage) -> bool:
    """Whether a count repeats a record's call (the same tokens)."""
    return (record.input, record.output, record.cache_read) == (
        counted.input,
        counted.output,
        counted.cache_read,
    )
