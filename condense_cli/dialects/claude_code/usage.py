"""The model calls a Claude Code session records: every assistant line's `usage`,
each call once. The client writes a line per content block of one answer, each with
the same message id, request id and usage (the call's `key`, which a forked session's
copy keeps too); `condense run`'s copies (`condenseCopyOf`)
and the replies the client writes itself (`<synthetic>`) are no calls."""

from __future__ import annotations

from typing import Any

from condense_cli.core.jsonlines import as_dict
from condense_cli.core.usage import Usage
from condense_cli.dialects.claude_code.events import COPY_OF
from condense_cli.dialects.claude_code.lines import Session
from condense_cli.dialects.claude_code.resume import SYNTHETIC_MODEL


def session_usage(session: Session) -> list[Usage]:
    """Each call of the session, in the order the session records it."""
    seen: set[str] = set()
    found = []
    for line in session.lines:
        if line.type != "assistant":
            continue
        data = line.parse()
        message = as_dict(data.get("message"))
        usage, model = message.get("usage"), message.get("model")
        if not isinstance(usage, dict) or not isinstance(model, str) or model == SYNTHETIC_MODEL:
            continue
        if data.get(COPY_OF):
            continue
        call, request = message.get("id"), data.get("requestId")
        key = f"{call}:{request}" if isinstance(call, str) and isinstance(request, str) else None
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        written = _count(usage, "cache_creation_input_tokens")
        hour = min(
            written, _count(as_dict(usage.get("cache_creation")), "ephemeral_1h_input_tokens")
        )
        stamp = data.get("timestamp")
        found.append(
            Usage(
                stamp if isinstance(stamp, str) else "",
                model,
                _count(usage, "input_tokens"),
                _count(usage, "output_tokens"),
                written - hour,
                hour,
                _count(usage, "cache_read_input_tokens"),
                line.number,
                key,
            )
        )
    return found


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
