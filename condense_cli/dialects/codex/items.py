"""Codex rollout items: which types Codex sends to the model, and an item as an event
of the view (its text, its tool call or output, whether it is a summary)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from condense_cli.core.events import Event, LastParsed, cleared_arguments
from condense_cli.core.jsonlines import as_str, encode, json_type
from condense_cli.core.logfile import LogSource

CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
ITEM_TYPES = (
    CALLS
    | OUTPUTS
    | {
        "message",
        "reasoning",
        "web_search_call",
        "image_generation_call",
        "compaction",
        "compaction_summary",
        "additional_tools",
        "ghost_snapshot",
    }
)
NOT_SENT = frozenset({"ghost_snapshot"})  # recorded by Codex, never sent to the model
# What Codex must find in an item of each type to decode it: a field missing or of
# another JSON type, and it skips the item's whole line (a `compacted` line too).
# Each was tried with the real client (0.171.0); types not listed need nothing checked.
NEEDS: dict[str, dict[str, tuple[type, ...]]] = {
    "message": {"role": (str,), "content": (list,)},
    "reasoning": {"summary": (list,)},
    "function_call": {"name": (str,), "call_id": (str,), "arguments": (str,)},
    "function_call_output": {"call_id": (str,), "output": (str, list)},
    "custom_tool_call": {"call_id": (str,), "name": (str,), "input": (str,)},
    "custom_tool_call_output": {"call_id": (str,), "output": (str, list)},
    "compaction": {"encrypted_content": (str,)},
    "compaction_summary": {"encrypted_content": (str,)},
}
# A message's content parts Codex knows, with the string field each must have.
PARTS = {"input_text": "text", "output_text": "text", "input_image": "image_url"}
SUMMARY_KIND = "compaction.summary"
LAST_PARSED = LastParsed()  # the item parsed last
LINE_STAMP = re.compile(rb'\{\s*"timestamp"\s*:\s*"([^"\\]{1,64})"')  # a line's head
# User messages Codex writes itself (context, not something the user typed).
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<skill>",
    "<user_shell_command>",
    "<turn_aborted>",
    "<subagent_notification>",
)


def _texts(value: Any) -> list[str]:
    """The texts of a content list (or a plain string)."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    return [
        part["text"]
        for part in value
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]


class CodexEvent(Event):
    """One response item; `data` is the item (the payload), `raw` its whole line:
    kept, or read back from the log where `at` says it is (the log, from, to).

    Made by the fast path (`codex.fast`) with `data` None, it knows its item type and
    call id (`fast_type`, `fast_call`) and parses its line when `data` is first asked for."""

    __slots__ = (
        "_data",
        "_raw",
        "answers",
        "at",
        "fast_call",
        "fast_type",
        "line",
        "number",
        "origin",
        "sub",
        "summary",
    )

    def __init__(
        self, data: dict[str, Any] | None, raw: bytes | None, line: int | None, sub: int = 0
    ) -> None:
        self.at: tuple[LogSource, int, int] | None = None
        self.fast_type: str | None = None  # the item type, when `data` is not parsed yet
        self.fast_call: str | None = None  # and its `call_id`, when a string
        self._data: dict[str, Any] | None = None
        super().__init__(data, None, raw)  # type: ignore[arg-type]
        self.line = line
        self.sub = sub
        self.summary = False
        self.answers: int | None = None  # the key of the call an output answers
        self.origin = ""  # "base", "base2", …: the line is in a fork's base rollout
        # The number it is shown by: an item of a replacement history that copies an
        # earlier item is shown by the original's, so every command names it by one.
        self.number: object = None

    @property
    def raw(self) -> bytes | None:
        at = self.at
        if at is None:
            return self._raw
        source, start, end = at
        return source.read_at(start, end)

    @raw.setter
    def raw(self, value: bytes | None) -> None:
        self._raw = value

    @property
    def data(self) -> dict[str, Any]:
        """The item. One made by the fast path parses its line when asked and keeps
        no copy (`LAST_PARSED`)."""
        data: dict[str, Any] = LAST_PARSED.kept_or_parsed(self, self._data, self._parse)
        return data

    @data.setter
    def data(self, value: dict[str, Any] | None) -> None:
        self._data = value

    def _parse(self) -> dict[str, Any]:
        line: dict[str, Any] = orjson.loads(self.raw)  # type: ignore[arg-type]
        item: dict[str, Any] = line["payload"]
        return item

    @property
    def timestamp(self) -> str:
        """The stamp of the item's line (the item has none of its own): found at the
        line's head, where Codex writes it, else in the line parsed."""
        raw = self.raw
        if not raw:
            return ""
        found = LINE_STAMP.match(raw)
        if found is not None:
            return found.group(1).decode()
        try:
            stamp = orjson.loads(raw).get("timestamp")
        except (orjson.JSONDecodeError, AttributeError):
            return ""
        return stamp if isinstance(stamp, str) else ""

    @property
    def id(self) -> object:
        if self.number is not None:
            return self.number
        if self.line is None:
            return None
        place = f"{self.line}.{self.sub}" if self.sub else self.line
        return f"{self.origin}:{place}" if self.origin else place

    @property
    def line_item(self) -> int | None:
        """The number of the rollout's line whose payload this item is, as read (None
        for an item of a fork's base, of a replacement history, or made here)."""
        if self.sub or self.origin or (self.at is None and self._raw is None):
            return None
        return self.line

    @property
    def item_type(self) -> str:
        kind = self.fast_type
        return kind if kind is not None else as_str(self.data.get("type"))

    @property
    def role(self) -> str:
        return as_str(self.data.get("role"))

    @property
    def source(self) -> str:
        if self.item_type in OUTPUTS:
            return "environment"
        return "user" if self.role == "user" else "agent"

    @property
    def is_action(self) -> bool:
        return self.item_type not in OUTPUTS

    @property
    def type(self) -> str:
        if self.item_type == "message" and self.role == "developer":
            return "system"
        return self.item_type

    @property
    def text(self) -> str:
        data, kind = self.data, self.item_type
        if kind == "message":
            return "\n".join(_texts(data.get("content")))
        if kind == "reasoning":
            return "\n".join(_texts(data.get("summary")) + _texts(data.get("content")))
        if kind == "function_call":
            return f"{as_str(data.get('name'))}({as_str(data.get('arguments'))})"
        if kind == "custom_tool_call":
            return f"{as_str(data.get('name'))}: {as_str(data.get('input'))}"
        if kind in OUTPUTS:
            return "\n".join(_texts(data.get("output")))
        if kind in ("compaction", "compaction_summary"):
            return f"(encrypted summary, {len(as_str(data.get('encrypted_content'))):,} chars)"
        return encode(data).decode()

    @property
    def tool_call_id(self) -> str | None:
        if self.item_type in CALLS or self.item_type in OUTPUTS:
            if self.fast_type is not None:
                return self.fast_call
            call = self.data.get("call_id")
            return call if isinstance(call, str) else None
        return None

    @property
    def cause(self) -> int | None:
        return self.answers

    @property
    def is_summary(self) -> bool:
        return self.summary

    @property
    def marks_summary(self) -> bool:
        """Codex's own summaries: a compaction item, or a user message of that kind."""
        if self.item_type in ("compaction", "compaction_summary"):
            return True
        meta = self.data.get("internal_chat_message_metadata_passthrough")
        kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
        return self.role == "user" and isinstance(kinds, list) and SUMMARY_KIND in kinds

    @property
    def is_user_turn(self) -> bool:
        """A message the user typed (Codex's user-turn boundary)."""
        if self.item_type != "message" or self.role != "user" or self.marks_summary:
            return False
        texts = _texts(self.data.get("content"))
        return not (texts and texts[0].lstrip().startswith(CONTEXT_PREFIXES))

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        data, kind = self.data, self.item_type
        if kind == "function_call":
            try:
                arguments = orjson.loads(as_str(data.get("arguments")))
            except orjson.JSONDecodeError:
                arguments = None
            return as_str(data.get("name")), arguments if isinstance(arguments, dict) else {}
        if kind == "custom_tool_call":
            return as_str(data.get("name")), {"input": as_str(data.get("input"))}
        if kind == "local_shell_call":
            action = data.get("action")
            return "local_shell", action if isinstance(action, dict) else {}
        return None

    @property
    def is_instruction(self) -> bool:
        return self.is_user_turn

    def masked(self, text: str) -> CodexEvent:
        if self.item_type not in OUTPUTS:
            raise NotImplementedError(f"a {self.item_type} item cannot be masked")
        return self._changed({"output": text})

    def inputs_cleared(self, note: str) -> CodexEvent:
        kind = self.item_type
        if kind == "function_call":
            return self._changed({"arguments": encode(cleared_arguments(note)).decode()})
        if kind == "custom_tool_call":  # (its input is raw text)
            return self._changed({"input": note})
        if kind == "local_shell_call":
            return self._changed({"action": cleared_arguments(note)})
        raise NotImplementedError(f"a {kind} item has no tool input to clear")

    def _changed(self, fields: dict[str, Any]) -> CodexEvent:
        """A copy with some of its item's fields changed; it keeps its key."""
        copy = CodexEvent({**self.data, **fields}, None, self.line, self.sub)
        copy.origin = self.origin
        copy.key = self.key
        copy.summary = self.summary
        copy.answers = self.answers
        return copy

    def to_json(self) -> bytes:
        return encode(self.data)


def summary_item(text: str) -> dict[str, Any]:
    """A summary as condense writes it: a user message of Codex's summary kind."""
    return {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
        "internal_chat_message_metadata_passthrough": {"content_item_kinds": [SUMMARY_KIND]},
    }


def new_summary(text: str) -> CodexEvent:
    event = CodexEvent(summary_item(text), None, None)
    event.summary = True
    return event


def undecodable(item: dict[str, Any]) -> str | None:
    """Why Codex cannot decode `item`, which makes it skip the item's line; None when
    it can (an item of a type it does not know decodes, and is not sent)."""
    kind = item.get("type")
    if not isinstance(kind, str):
        return 'it has no string "type"'
    for name, types in NEEDS.get(kind, {}).items():
        if name == "arguments" and "encrypted_function_args" in item:
            continue  # (arguments sent encrypted: not tried)
        if not isinstance(item.get(name), types):
            return f"a {kind} without {KINDS[types]} {name}"
    if kind == "message":
        for part in item["content"]:
            part_type = part.get("type") if isinstance(part, dict) else None
            field = PARTS.get(part_type) if isinstance(part_type, str) else None
            if field is None:
                named = repr(part_type) if isinstance(part_type, str) else json_type(part_type)
                return f"a message with a content part of type {named}, which Codex does not know"
            if not isinstance(part.get(field), str):
                return f"a message with an {part_type} part without a string {field}"
    return None


KINDS: dict[tuple[type, ...], str] = {
    (str,): "a string",
    (list,): "an array",
    (str, list): "a string or an array",
}


def is_sent(item: dict[str, Any]) -> bool:
    """Whether Codex sends this recorded item to the model."""
    kind = item.get("type")
    return isinstance(kind, str) and kind in ITEM_TYPES and sends(kind, item.get("role"))


def sends(kind: str, role: object) -> bool:
    """Whether Codex sends an item of this (known) type and role to the model."""
    return kind not in NOT_SENT and not (kind == "message" and role == "system")
