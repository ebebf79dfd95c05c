"""The model calls a Codex rollout records: each `token_count` whose running total
moved, its `last_token_usage` (Codex writes a count again without a new call: the
total then stays), priced on the model of the `turn_context` before it. Codex's
`input_tokens` hold the cached ones; `output_tokens` hold the reasoning ones."""

from __future__ import annotations

from typing import Any

import orjson

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.logfile import LogSource, line_body
from condense_cli.core.usage import Usage, count


def rollout_usage(source: LogSource) -> list[Usage]:
    """Each call of the rollout, in its order (its lines read again, parsed only
    where they are a turn context or a token count)."""
    found = []
    model = ""
    total: Any = None
    for number, raw in enumerate(source.raw_lines(), start=1):
        if b'"turn_context"' not in raw and b'"token_count"' not in raw:
            continue
        try:
            line = orjson.loads(line_body(raw, first=number == 1))
        except orjson.JSONDecodeError:
            continue
        payload = as_dict(line.get("payload") if isinstance(line, dict) else None)
        if line.get("type") == "turn_context" and isinstance(payload.get("model"), str):
            model = payload["model"]
            continue
        info = as_dict(payload.get("info"))
        if (
            payload.get("type") != "token_count"
            or not info
            or info.get("total_token_usage") == total
        ):
            continue
        total = info.get("total_token_usage")
        last = as_dict(info.get("last_token_usage"))
        cached = count(last, "cached_input_tokens")
        stamp = line.get("timestamp")
        when = stamp if isinstance(stamp, str) else ""
        given, output = count(last, "input_tokens"), count(last, "output_tokens")
        found.append(
            Usage(
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
        )
    return found
