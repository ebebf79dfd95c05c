"""The copies `condense run` writes after its boundary: each kept message
re-parented on the one before it, with fresh ids (so the client neither drops one nor
merges it with its original), naming the original in `condenseCopyOf`."""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

from condense_cli.core.events import Event
from condense_cli.dialects.claude_code.events import COPY_OF


def copy_line(
    event: Event,
    base: dict[str, Any],
    stamp: str,
    parent: str,
    new_ids: dict[str, str],
    message_ids: dict[str, str],
) -> dict[str, Any]:
    """A kept message re-parented after the boundary, with fresh ids."""
    fresh = str(uuidlib.uuid4())
    if event.is_summary and event.raw is None:  # a new summary
        return {
            "parentUuid": parent,
            **base,
            "type": "user",
            "message": dict(event.data["message"]),
            "isCompactSummary": True,
            "isVisibleInTranscriptOnly": True,
            "uuid": fresh,
            "timestamp": stamp,
        }
    data = dict(event.data)
    original = data.get("uuid")
    if isinstance(original, str):
        new_ids[original] = fresh
        data[COPY_OF] = data.get(COPY_OF) or original
    data["uuid"] = fresh
    data["parentUuid"] = parent
    data.pop("requestId", None)
    message = data.get("message")
    if isinstance(message, dict) and isinstance(message.get("id"), str):
        mid = message["id"]
        new = message_ids.setdefault(mid, f"msg_condense_{uuidlib.uuid4().hex[:24]}")
        data["message"] = {**message, "id": new}
    source = data.get("sourceToolAssistantUUID")
    if isinstance(source, str) and source in new_ids:
        data["sourceToolAssistantUUID"] = new_ids[source]
    return data
