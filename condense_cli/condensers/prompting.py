"""How events are shown to a model: tagged with their id, long texts cut in the middle."""

from __future__ import annotations

import re
from collections.abc import Iterable

from condense_cli.core.events import Event

EVENT_TAG = re.compile(r"</?\s*(?:events?|previous_summary)\b", re.I)  # the prompt's own tags
MARKER_BUDGET = 40  # characters reserved for the "[... N characters cut ...]" line


def truncate_middle(text: str, limit: int) -> str:
    """Keep the start and the end of `text`, at most `limit` characters in all."""
    if len(text) <= limit:
        return text
    keep = max(0, limit - MARKER_BUDGET)
    marker = f"\n[... {len(text) - keep:,} characters cut ...]\n"
    head = keep - keep // 2
    return text[:head] + marker + text[len(text) - keep // 2 :]


def event_body(event: Event) -> str:
    """The text a model should read for one event."""
    parts = []
    if event.thought:
        parts.append(f"(thought) {event.thought}")
    if event.is_action and event.type == "run":
        parts.append(f"$ {event.text}")
    else:
        parts.append(event.text)
    if event.exit_code is not None:
        parts.append(f"(exit code {event.exit_code})")
    return "\n".join(p for p in parts if p)


def format_event(event: Event, limit: int) -> str:
    """`<event id=12 source=agent type=action:run>…</event>`, text cut to `limit`; an
    event tag inside the text is escaped (`&lt;event`), so no text a tool wrote can
    close its event or pose as another one (the user's, say)."""
    tag = f"<event id={event.key} source={event.source or '-'} type={event.kind}:{event.type}"
    if event.cause is not None:
        tag += f" answers={event.cause}"
    body = EVENT_TAG.sub(
        lambda m: "&lt;" + m.group(0)[1:], truncate_middle(event_body(event), limit)
    )
    return f"{tag}>\n{body}\n</event>"


def format_events(events: Iterable[Event], limit: int) -> str:
    return "\n".join(format_event(event, limit) for event in events)
