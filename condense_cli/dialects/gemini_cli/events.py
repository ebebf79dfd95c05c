"""A Gemini CLI message as an event, and the parts the client reads of one.

A session records messages (`type` user, gemini, info, error or warning) whose
`content` is a string or a list of parts (`text`, `functionCall`,
`functionResponse`, …). A user message whose parts are function responses is a
tool's result; a gemini message's calls are parts of its content or, as the client
first writes them, `toolCalls` entries that carry their own result.
"""

from __future__ import annotations

import uuid
from typing import Any

import orjson

from condense_cli.core.events import Event, cleared_arguments
from condense_cli.core.jsonlines import as_dict, as_str, encode

# The client drops these user messages when it resumes (its context, which it
# writes afresh, a hook's context, and slash or help commands).
IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")
CONTEXT_PREFIXES = ("<session_context>", "<hook_context>")
NOT_SENT = frozenset({"info", "error", "warning"})


def as_parts(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of parts, as the client reads it."""
    if isinstance(content, list):
        return [
            {"text": p} if isinstance(p, str) else p for p in content if isinstance(p, str | dict)
        ]
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, dict):
        return [content]
    return []


def part_string(content: Any) -> str:
    """The content in words, as the client tells an empty or ignored message."""
    out = []
    for part in as_parts(content):
        if "thought" in part:
            out.append(f"[Thought: {part['thought']}]")
        elif "functionCall" in part:
            out.append(f"[Function Call: {as_str(as_dict(part['functionCall']).get('name'))}]")
        elif "functionResponse" in part:
            name = as_str(as_dict(part["functionResponse"]).get("name"))
            out.append(f"[Function Response: {name}]")
        else:
            out.append(as_str(part.get("text")))
    return "".join(out)


def is_sent(message: dict[str, Any]) -> bool:
    """Whether the client sends `message` to the model when it resumes (its own
    context aside, which it writes afresh)."""
    kind = message.get("type")
    if kind == "user":
        text = part_string(message.get("content")).strip()
        return bool(text) and not text.startswith(IGNORED_PREFIXES)
    if kind == "gemini":
        return bool(model_parts(message))
    return False


def is_context(message: dict[str, Any]) -> bool:
    """The client's own context message (the environment, a hook's context)."""
    text = part_string(message.get("content")).strip()
    return message.get("type") == "user" and text.startswith(CONTEXT_PREFIXES)


def calls_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The `toolCalls` entries of a gemini message as the client first writes it."""
    calls = message.get("toolCalls")
    return [c for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []


def model_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The parts the client sends for a gemini message: its content as it is when it
    holds calls or thoughts, else its thoughts, its content and its calls."""
    content = as_parts(message.get("content")) if message.get("content") else []
    if any(p.get("functionCall") or p.get("thought") for p in content):
        return content
    parts: list[dict[str, Any]] = []
    for thought in message.get("thoughts") or []:
        if isinstance(thought, dict):
            subject, said = as_str(thought.get("subject")), as_str(thought.get("description"))
            parts.append({"text": f"**{subject}** {said}" if subject else said, "thought": True})
    parts.extend(content)
    for call in calls_of(message):
        parts.append(
            {
                "functionCall": {
                    "id": call.get("id"),
                    "name": call.get("name"),
                    "args": call.get("args"),
                }
            }
        )
    return parts


def response_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The function responses the client sends after a gemini message's `toolCalls`
    (as a user turn of their own, `<id>_response`)."""
    parts: list[dict[str, Any]] = []
    for call in calls_of(message):
        result = call.get("result")
        if not result:
            continue
        if isinstance(result, str):
            parts.append(
                {
                    "functionResponse": {
                        "id": call.get("id"),
                        "name": call.get("name"),
                        "response": {"output": result},
                    }
                }
            )
        elif isinstance(result, list):
            parts.extend(as_parts(result))
        elif isinstance(result, dict):
            parts.append(result)
    return parts


def sent_key(message: dict[str, Any]) -> bytes:
    """What the model reads of `message`, as bytes to compare: a copy the client
    wrote under a new id (a compression keeps what it keeps so) has its original's."""
    kind = message.get("type")
    parts = model_parts(message) if kind == "gemini" else as_parts(message.get("content"))
    kept = []
    for part in parts:
        if part.get("thought") or (part.get("text") == "" and len(part) == 1):
            continue
        kept.append({k: part[k] for k in ("text", "functionCall", "functionResponse") if k in part})
    return orjson.dumps([kind, kept], option=orjson.OPT_SORT_KEYS)


class GeminiEvent(Event):
    """One message of the session; `data` is its record, `raw` its line when it has
    one of its own (a message written inside a list of messages has none).

    `number` is how every command names it: a copy the client wrote under a new id
    has its original's."""

    __slots__ = ("answers", "line", "number", "snapshot")

    def __init__(self, data: dict[str, Any], raw: bytes | None, line: int, number: int) -> None:
        super().__init__(data, None, raw)
        self.line = line
        self.number = number
        self.snapshot = False  # the state snapshot a compression put in place
        self.answers: int | None = None

    def placed(self, key: int | None) -> GeminiEvent:
        """A copy of this event at `key` in a view or a history (the same message
        is in several: the session's lists before and after each compression)."""
        copy = GeminiEvent(self.data, self.raw, self.line, self.number)
        copy.key, copy.snapshot = key, self.snapshot
        return copy

    @property
    def id(self) -> object:
        return self.number or None  # (0: made here, not read)

    @property
    def message_id(self) -> str:
        return as_str(self.data.get("id"))

    @property
    def message_type(self) -> str:
        """`user` or `gemini` (the others are never sent)."""
        return as_str(self.data.get("type"))

    @property
    def parts(self) -> list[dict[str, Any]]:
        if self.message_type == "gemini":
            return [p for p in model_parts(self.data) if not p.get("thought")]
        return as_parts(self.data.get("content"))

    @property
    def responses(self) -> list[dict[str, Any]]:
        """The function responses of a tool's result (a user message's parts)."""
        if self.message_type != "user":
            return []
        return [as_dict(p.get("functionResponse")) for p in self.parts if "functionResponse" in p]

    @property
    def calls(self) -> list[dict[str, Any]]:
        return [as_dict(p.get("functionCall")) for p in self.parts if "functionCall" in p]

    @property
    def source(self) -> str:
        if self.responses:
            return "environment"
        return "agent" if self.message_type == "gemini" else "user"

    @property
    def is_action(self) -> bool:
        return not self.responses

    @property
    def type(self) -> str:
        if self.responses:
            return as_str(self.responses[0].get("name")) or "tool"
        if self.message_type == "gemini":
            calls = self.calls
            return as_str(calls[0].get("name")) or "tool" if calls else "message"
        if is_context(self.data):
            return "context"
        return "message"

    @property
    def text(self) -> str:
        out = []
        for part in self.parts:
            if "text" in part:
                out.append(as_str(part["text"]))
            elif "functionCall" in part:
                call = as_dict(part["functionCall"])
                out.append(f"{as_str(call.get('name'))}({encode(call.get('args')).decode()})")
            elif "functionResponse" in part:
                out.append(_response_text(as_dict(part["functionResponse"]).get("response")))
        return "\n".join(t for t in out if t)

    @property
    def thought(self) -> str:
        if self.message_type != "gemini":
            return ""
        said = [as_str(p.get("text")) for p in model_parts(self.data) if p.get("thought")]
        return "\n".join(said)

    @property
    def tool_call_id(self) -> str | None:
        calls = self.calls or self.responses
        call = calls[0].get("id") if calls else None
        return call if isinstance(call, str) else None

    @property
    def cause(self) -> int | None:
        return self.answers

    @property
    def is_summary(self) -> bool:
        return self.snapshot

    @property
    def is_instruction(self) -> bool:
        return super().is_instruction and not self.snapshot

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        calls = self.calls
        if not calls:
            return None
        return as_str(calls[0].get("name")), as_dict(calls[0].get("args"))

    def masked(self, text: str) -> Event:
        """A tool's result whose output reads `text`."""
        parts = []
        for part in as_parts(self.data.get("content")):
            if "functionResponse" in part:
                response = as_dict(part["functionResponse"]) | {"response": {"output": text}}
                part = part | {"functionResponse": response}
            parts.append(part)
        copy = GeminiEvent(self.data | {"content": parts}, None, self.line, self.number)
        copy.key, copy.answers = self.key, self.answers
        return copy

    def inputs_cleared(self, note: str) -> Event:
        """A model message whose function calls' arguments are a note (in its content's
        parts and in the `toolCalls` the client writes first, whichever it holds)."""
        cleared = cleared_arguments(note)
        parts = [
            p | {"functionCall": as_dict(p["functionCall"]) | {"args": cleared}}
            if "functionCall" in p
            else p
            for p in as_parts(self.data.get("content"))
        ]
        data = self.data | {"content": parts} if self.data.get("content") else dict(self.data)
        if calls_of(self.data):
            data["toolCalls"] = [c | {"args": cleared} for c in calls_of(self.data)]
        copy = GeminiEvent(data, None, self.line, self.number)
        copy.key, copy.answers = self.key, self.answers
        return copy


def new_snapshot(text: str) -> GeminiEvent:
    """A summary made here, as a compression writes its state snapshot: a user
    message of its own at the head of the list."""
    record = {"id": str(uuid.uuid4()), "type": "user", "content": [{"text": text}]}
    event = GeminiEvent(record, None, 0, 0)
    event.snapshot = True
    return event


def _response_text(response: Any) -> str:
    """A function response's output as the model reads it."""
    if isinstance(response, dict):
        for field in ("output", "content", "error"):
            if isinstance(response.get(field), str):
                return str(response[field])
    if isinstance(response, str):
        return response
    return encode(response).decode() if response is not None else ""
