"""Neutral facts of an SDK event (its kind, source, tool call, text, thinking), and the
summaries condensations insert."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from condense_cli.core.jsonlines import as_dict, encode
from condense_cli.dialects.openhands_v1.detect import (
    ACTION,
    CONDENSATION,
    CONDENSATION_REQUEST,
    OBSERVATION_KINDS,
    SENT_KINDS,
    SUMMARY_KIND,
)
from condense_cli.dialects.openhands_v1.storage import StoredEvent


@dataclass(frozen=True, slots=True)
class Facts:
    """What other code needs to know of an event, without V1's keys."""

    source: str  # user, agent, environment (or hook)
    role: str | None  # the chat role it is sent as; None when it is not sent
    type: str  # the tool name for tool calls and results, else a short kind
    text: str  # what the model reads of it
    thought: str  # the text the model wrote before a tool call
    reasoning: str  # reasoning / thinking text, when the model exposed it
    tool_call_id: str | None
    llm_response_id: str | None  # one model response: its parallel tool calls share it
    sent: bool
    thinking: bool  # a tool call with thinking blocks: it starts a tool loop
    exit_code: int | None = None  # the exit code a command's result reports
    url: str = ""  # the address a browsing result shows


def texts_of(content: Any) -> str:
    """The text parts of a message content list (or a plain string)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        item["text"]
        for item in content
        if isinstance(item, dict) and isinstance(item.get("text"), str)
    ]
    return "\n".join(parts)


def _tool_arguments(call: Any) -> str:
    """A tool call's arguments: `arguments` now, `function.arguments` in 2025."""
    if not isinstance(call, dict):
        return ""
    arguments = call.get("arguments")
    if arguments is None and isinstance(call.get("function"), dict):
        arguments = call["function"].get("arguments")
    if isinstance(arguments, str):
        return arguments
    return encode(arguments).decode() if arguments is not None else ""


def _observation_text(observation: Any) -> str:
    """The text of a tool result: its content, else its output or message."""
    if not isinstance(observation, dict):
        return ""
    for key in ("content", "output", "message"):
        value = observation.get(key)
        text = texts_of(value)
        if text:
            return text
    return ""


def _reasoning(data: dict[str, Any]) -> str:
    parts = []
    if isinstance(data.get("reasoning_content"), str):
        parts.append(data["reasoning_content"])
    for block in data.get("thinking_blocks") or ():
        if isinstance(block, dict) and isinstance(block.get("thinking"), str):
            parts.append(block["thinking"])
    return "\n".join(p for p in parts if p)


def _address(observation: dict[str, Any]) -> str:
    url = observation.get("url")
    return url if isinstance(url, str) else ""


def _exit_code(observation: dict[str, Any]) -> int | None:
    code = observation.get("exit_code")
    metadata = observation.get("metadata")
    if code is None and isinstance(metadata, dict):
        code = metadata.get("exit_code")
    # The SDK writes -1 when a command has no exit code (it is still running).
    if isinstance(code, int) and not isinstance(code, bool) and code >= 0:
        return code
    return None


def call_id(value: Any) -> str | None:
    """The tool call an event pairs by, from its `tool_call_id` (a string, or none)."""
    return value if isinstance(value, str) else None


def facts(data: dict[str, Any]) -> Facts:
    """The neutral facts of one (validated) event."""
    kind = data["kind"]
    source = data.get("source") if isinstance(data.get("source"), str) else ""
    tool_call_id = call_id(data.get("tool_call_id"))
    response = data.get("llm_response_id")
    response_id = response if isinstance(response, str) else None
    thought, reasoning, thinking = "", "", False
    role: str | None = None
    url, exit_code = "", None
    if kind == ACTION:
        role, type_ = "assistant", str(data.get("tool_name") or "tool")
        text = _tool_arguments(data.get("tool_call"))
        thought = texts_of(data.get("thought"))
        reasoning = _reasoning(data)
        thinking = bool(data.get("thinking_blocks"))
    elif kind in OBSERVATION_KINDS:
        role, type_ = "tool", str(data.get("tool_name") or "tool")
        if kind == "AgentErrorEvent":
            text = str(data.get("error") or "")
        elif kind == "UserRejectObservation":
            text = f"Action rejected: {data.get('rejection_reason', 'User rejected the action')}"
        else:
            observation = data.get("observation")
            text = _observation_text(observation)
            if isinstance(observation, dict) and kind == "ObservationEvent":
                url, exit_code = _address(observation), _exit_code(observation)
    elif kind == "MessageEvent":
        message = as_dict(data.get("llm_message"))
        role, type_ = str(message.get("role") or source or "user"), "message"
        text = "\n".join(
            t
            for t in (texts_of(message.get("content")), texts_of(data.get("extended_content")))
            if t
        )
        reasoning = _reasoning(message)
    elif kind == "SystemPromptEvent":
        role, type_ = "system", "system"
        prompt = data.get("system_prompt")
        context = data.get("dynamic_context")
        text = "\n".join(
            t["text"]
            for t in (prompt, context)
            if isinstance(t, dict) and isinstance(t.get("text"), str)
        )
    elif kind == SUMMARY_KIND:
        role, type_, text = "user", "summary", str(data.get("summary") or "")
    elif kind == CONDENSATION:
        type_, text = "condensation", str(data.get("summary") or "")
    elif kind == CONDENSATION_REQUEST:
        type_, text = "condensation_request", ""
    else:
        type_, text = kind, ""
    return Facts(
        source=source or "",
        role=role,
        type=type_,
        text=text,
        thought=thought,
        reasoning=reasoning,
        tool_call_id=tool_call_id,
        llm_response_id=response_id,
        sent=kind in SENT_KINDS,
        thinking=thinking,
        exit_code=exit_code,
        url=url,
    )


@dataclass(frozen=True, slots=True)
class Summary:
    """A condensation's summary as it stands in a view (a user message to the model)."""

    id: str  # "<condensation id>-summary"
    text: str
    condensation: StoredEvent

    kind = SUMMARY_KIND

    @property
    def facts(self) -> Facts:
        return Facts(
            source=str(self.condensation.data.get("source") or "environment"),
            role="user",
            type="summary",
            text=self.text,
            thought="",
            reasoning="",
            tool_call_id=None,
            llm_response_id=None,
            sent=True,
            thinking=False,
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary as the SDK's CondensationSummaryEvent shape."""
        return {"kind": SUMMARY_KIND, "id": self.id, "summary": self.text}


Entry = StoredEvent | Summary


def summary_of(condensation: StoredEvent) -> Summary | None:
    """The summary a condensation inserts, when it has both a summary and an offset."""
    data = condensation.data
    text, offset = data.get("summary"), data.get("summary_offset")
    if text is None or offset is None:
        return None
    return Summary(f"{condensation.id}-summary", text, condensation)
