"""What an SDK event must hold to be read: the fields every event has, and those of
a condensation (`check` lists what is missing or wrong)."""

from __future__ import annotations

from typing import Any

from condense_cli.core.jsonlines import json_type
from condense_cli.dialects.openhands_v1.detect import (
    ACTION,
    CONDENSATION,
    KNOWN_KINDS,
    OBSERVATION_KINDS,
)

SOURCES = frozenset({"agent", "user", "environment", "hook"})


def event_problem(data: dict[str, Any]) -> str | None:
    """What is wrong with one parsed event, or None when the SDK would load it."""
    kind = data.get("kind")
    if kind is None:
        return 'no "kind"; a V1 event names its class in "kind"'
    if not isinstance(kind, str):
        return f'"kind" must be a string, got {json_type(kind)}'
    if kind not in KNOWN_KINDS:
        return f"unknown event kind {kind!r}"
    event_id = data.get("id")
    if event_id is None:
        return 'missing "id"'
    if not isinstance(event_id, str) or not event_id:
        return f'"id" must be a non-empty string, got {json_type(event_id)}'
    source = data.get("source")
    if source is not None and source not in SOURCES:
        return f'"source" must be one of agent, user, environment, hook; got {source!r}'
    tool_kind = kind == ACTION or kind in OBSERVATION_KINDS
    if tool_kind and not isinstance(data.get("tool_call_id"), str):
        return f'{kind} without a string "tool_call_id"'
    response = data.get("llm_response_id")
    if kind == ACTION and response is not None and not isinstance(response, str):
        return f'"llm_response_id" must be a string, got {json_type(response)}'
    if kind == CONDENSATION:
        return condensation_problem(data)
    return None


def condensation_problem(data: dict[str, Any]) -> str | None:
    ids = data.get("forgotten_event_ids", [])
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return '"forgotten_event_ids" must be a list of event id strings'
    summary = data.get("summary")
    if summary is not None and not isinstance(summary, str):
        return f'"summary" must be a string or null, got {json_type(summary)}'
    offset = data.get("summary_offset")
    if offset is not None and (not isinstance(offset, int) or isinstance(offset, bool)):
        return f'"summary_offset" must be an integer or null, got {json_type(offset)}'
    if offset is not None and offset < 0:
        return f'"summary_offset" must be 0 or more, got {offset}'
    return None
