"""What marks a file or a folder as an OpenHands V1 conversation: the SDK's event
kinds and its folder layout. Cheap to import, so that detection loads
`openhands_v1` only for a log it reads."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.remote import is_url

NAME = "openhands-v1"
BASE_STATE = "base_state.json"
BASE_STATE_BYTES = 16 << 20  # a conversation's state is read to this size

CONDENSATION = "Condensation"
CONDENSATION_REQUEST = "CondensationRequest"
SUMMARY_KIND = "CondensationSummaryEvent"
ACTION = "ActionEvent"

#: Kinds that answer a tool call (the SDK's `ObservationBaseEvent` subclasses).
OBSERVATION_KINDS = frozenset({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})

#: Kinds the SDK converts to chat messages (`LLMConvertibleEvent` subclasses).
SENT_KINDS = frozenset(
    {"SystemPromptEvent", "MessageEvent", ACTION, SUMMARY_KIND} | OBSERVATION_KINDS
)

#: Kinds that exist but never reach the model.
UNSENT_KINDS = frozenset(
    {
        CONDENSATION,
        CONDENSATION_REQUEST,
        "PauseEvent",
        "InterruptEvent",
        "ConversationStateUpdateEvent",
        "ConversationErrorEvent",
        "ServerErrorEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "ACPToolCallEvent",
        "StreamingDeltaEvent",
        "TokenEvent",
    }
)

KNOWN_KINDS = SENT_KINDS | UNSENT_KINDS

EVENTS_DIR = "events"
#: The event file names the SDK reads (5 or more digits, then a hex-and-dash id).
FILE_NAME_RE = re.compile(r"^event-(?P<index>\d{5,})-(?P<id>[0-9a-fA-F\-]{8,})\.json$")


def claims(first: dict[str, Any]) -> bool:
    """Whether a file whose first JSON object is `first` holds V1 events, one per line."""
    return isinstance(first.get("kind"), str) and first["kind"] in KNOWN_KINDS


def claims_folder(path: Path) -> bool:
    """Whether the folder `path` is a V1 conversation (or its `events/` folder)."""
    if (path / "event_service").is_dir() or (path / EVENTS_DIR).is_dir():
        return True
    try:
        return claims_listing((), os.listdir(path))
    except OSError:
        return False


def project_of(log: str) -> str | None:
    """The folder a conversation worked in: the `working_dir` of the workspace its
    `base_state.json` records (the SDK writes it from October 2025; None before, for
    a path that is no conversation folder here, or for one on a store)."""
    path = Path(log)
    if is_url(log) or not path.is_dir():
        return None
    for folder in (path / "event_service", path, path.parent):
        state = folder / BASE_STATE
        try:
            with state.open("rb") as file:
                data = orjson.loads(file.read(BASE_STATE_BYTES))
        except (OSError, orjson.JSONDecodeError):
            continue
        workspace = data.get("workspace") if isinstance(data, dict) else None
        working = workspace.get("working_dir") if isinstance(workspace, dict) else None
        return working if isinstance(working, str) and working else None
    return None


def claims_listing(folders: Iterable[str], files: Iterable[str]) -> bool:
    """Whether a folder holding these sub-folders and files (names) is a V1
    conversation (or its `events/` folder): `claims_folder` for a listing, as an
    object store gives it."""
    if {"event_service", EVENTS_DIR} & set(folders):
        return True
    return any(FILE_NAME_RE.match(name) for name in files)
