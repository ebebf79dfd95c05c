"""Claude Code's line types and the events of a view: what a line says to the model,
and the Messages API list the client builds from a view."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import Event, LastParsed, cleared_arguments
from condense_cli.core.jsonlines import encode

if TYPE_CHECKING:
    from condense_cli.dialects.claude_code.lines import Line

MESSAGE_TYPES = frozenset({"user", "assistant"})
TREE_TYPES = MESSAGE_TYPES | {"system", "attachment"}  # the lines linked by parentUuid
REQUEST_TYPE = "condense-request"
PIN_TYPE = "condense-pin"  # a pin `condense pin` keeps in the session (the client skips it)
COPY_OF = "condenseCopyOf"  # on the copies `condense run` writes: the uuid copied
BOUNDARY = "compact_boundary"  # the `subtype` of a compaction's system line
BASE_FIELDS = ("isSidechain", "userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch")


# What the client writes into a user message itself: command echoes, reminders, the
# notes of an interrupted turn, the output of a `!` command, background notices.
CLIENT_PREFIXES = (
    "<local-command-",
    "<system-reminder>",
    "<command-message>",
    "<command-name>",
    "[Request interrupted by user",
    "<bash-stdout>",
    "<bash-stderr>",
    "<task-notification>",
)


class BadLine(Exception):
    """A line is not a valid session line; the message says what is wrong."""


# --- events --------------------------------------------------------------------------


def blocks_of(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return encode(block.get("input")).decode()
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(_block_text(b) for b in blocks_of(content))
    if kind == "image":
        return "[image]"
    return ""


LAST_PARSED = LastParsed()  # the line parsed last, and its blocks


def _message_of(data: dict[str, Any]) -> dict[str, Any]:
    message = data.get("message")
    return message if isinstance(message, dict) else {}


def _blocks_of_line(data: dict[str, Any]) -> list[dict[str, Any]]:
    return blocks_of(_message_of(data).get("content"))


class ClaudeEvent(Event):
    """One `user` or `assistant` line of the active chain; its key is its line.

    Made with `data` None (and its `raw` bytes), it parses them when first asked;
    made from a session `Line` (`read_from`), it answers what the line already
    knows (uuid, summary, copy, the calls and results it pairs by) without parsing.
    """

    __slots__ = ("_blocks", "_data", "_raw", "answers", "line", "number", "read_from")

    def __init__(
        self,
        data: dict[str, Any] | None,
        key: int | None,
        raw: bytes | None,
        line: int | None = None,
        read_from: Line | None = None,
    ) -> None:
        self._data: dict[str, Any] | None = None
        self._blocks: list[dict[str, Any]] | None = None  # of `data`, made once
        self.read_from = read_from  # the session line it is (its data is the line's)
        super().__init__(data, key, raw)  # type: ignore[arg-type]
        self.line = line if line is not None else key  # its line in the session, if read
        self.answers: int | None = None  # key of the tool_use line a result answers
        # The number it is shown by: a copy `condense run` wrote is shown by its
        # original's line, so every command names a message by one number.
        self.number: int | None = None

    @property
    def raw(self) -> bytes | None:
        """Its bytes; made from a line without them, the line's, read when asked for
        (only while the log is open: see `Replay.hold`)."""
        raw = self._raw
        if raw is None and self.read_from is not None:
            return self.read_from.raw
        return raw

    @raw.setter
    def raw(self, value: bytes | None) -> None:
        self._raw = value

    @property
    def data(self) -> dict[str, Any]:
        """The line parsed. An event made without it parses its bytes when asked and
        keeps no copy (`LAST_PARSED`)."""
        data: dict[str, Any] = LAST_PARSED.kept_or_parsed(self, self._data, self._parse)
        return data

    @data.setter
    def data(self, value: dict[str, Any] | None) -> None:
        self._data = value
        self._blocks = None

    def _parse(self) -> dict[str, Any]:
        parsed: dict[str, Any] = orjson.loads(self.raw)  # type: ignore[arg-type]
        return parsed

    @property
    def message(self) -> dict[str, Any]:
        return _message_of(self.data)

    @property
    def blocks(self) -> list[dict[str, Any]]:
        """The message's content blocks, made once per parse: every property reads
        them (kept with the data: on the event, or in `LAST_PARSED`)."""
        blocks = self._blocks
        if blocks is not None:
            return blocks
        if self._data is not None:
            blocks = self._blocks = _blocks_of_line(self._data)
            return blocks
        made: list[dict[str, Any]] = LAST_PARSED.made_of(self, self._parse, _blocks_of_line)
        return made

    @property
    def uuid(self) -> str | None:
        if self.read_from is not None:
            return self.read_from.uuid
        value = self.data.get("uuid")
        return value if isinstance(value, str) else None

    @property
    def copy_of(self) -> Any:
        """The `condenseCopyOf` value of a copy `condense run` wrote (else None)."""
        if self.read_from is not None and not self.read_from.copy:
            return None
        return self.data.get(COPY_OF)

    @property
    def is_summary(self) -> bool:
        if self.read_from is not None:
            return self.read_from.compact_summary
        return self.data.get("isCompactSummary") is True

    @property
    def source(self) -> str:
        line = self.read_from  # what its line knows, it answers without a parse
        kind = line.type if line is not None else self.data.get("type")
        if kind == "assistant":
            return "agent"
        result = line.is_result if line is not None else self._result is not None
        return "environment" if result else "user"

    @property
    def _result(self) -> dict[str, Any] | None:
        return next((b for b in self.blocks if b.get("type") == "tool_result"), None)

    @property
    def _use(self) -> dict[str, Any] | None:
        return next((b for b in self.blocks if b.get("type") == "tool_use"), None)

    @property
    def is_action(self) -> bool:
        line = self.read_from
        return not line.is_result if line is not None else self._result is None

    @property
    def type(self) -> str:
        if self.is_summary:
            return "summary"
        use = self._use
        if use is not None:
            return str(use.get("name") or "tool_use")
        if self._result is not None:
            return "tool_result"
        kinds = {b.get("type") for b in self.blocks}
        return "thinking" if kinds == {"thinking"} else "message"

    @property
    def text(self) -> str:
        return "\n".join(t for t in (_block_text(b) for b in self.blocks) if t)

    @property
    def thought(self) -> str:
        return "\n".join(
            str(b.get("thinking") or "") for b in self.blocks if b.get("type") == "thinking"
        ).strip()

    @property
    def tool_call(self) -> tuple[str, dict[str, Any]] | None:
        use = self._use
        if use is None:
            return None
        arguments = use.get("input")
        return str(use.get("name") or "tool_use"), arguments if isinstance(arguments, dict) else {}

    @property
    def is_instruction(self) -> bool:
        if not super().is_instruction or self.data.get("isMeta") is True:
            return False
        return not self.text.lstrip().startswith(CLIENT_PREFIXES)

    @property
    def tool_call_id(self) -> str | None:
        line = self.read_from
        if line is not None and not line.odd_use:
            return line.first_call
        use = self._use
        if use is not None:
            return use.get("id") if isinstance(use.get("id"), str) else None
        result = self._result
        answered = result.get("tool_use_id") if result is not None else None
        if isinstance(answered, str):
            return answered
        return None

    @property
    def cause(self) -> int | None:
        return self.answers

    @property
    def id(self) -> object:
        return self.number if self.number is not None else self.key

    def masked(self, text: str) -> ClaudeEvent:
        blocks = [
            {**b, "content": text} if b.get("type") == "tool_result" else b for b in self.blocks
        ]
        data = {**self.data, "message": {**self.message, "content": blocks}}
        event = ClaudeEvent(data, self.key, None, self.line)
        event.answers = self.answers
        return event

    def inputs_cleared(self, note: str) -> ClaudeEvent:
        blocks = [
            {**b, "input": cleared_arguments(note)} if b.get("type") == "tool_use" else b
            for b in self.blocks
        ]
        data = {**self.data, "message": {**self.message, "content": blocks}}
        event = ClaudeEvent(data, self.key, None, self.line)
        event.answers = self.answers
        return event


def summary_event(text: str) -> ClaudeEvent:
    """The summary line a Claude Code view shows (the client's `isCompactSummary`)."""
    data = {
        "type": "user",
        "message": {"role": "user", "content": text},
        "isCompactSummary": True,
        "isVisibleInTranscriptOnly": True,
    }
    return ClaudeEvent(data, None, None)


def api_messages(events: Iterable[Event]) -> list[dict[str, Any]]:
    """The view as the Messages API list the client builds from it (`each_api_message`)."""
    return list(each_api_message(events))


def each_api_message(events: Iterable[Event]) -> Iterator[dict[str, Any]]:
    """The Messages API messages the client builds from the view, one at a time.

    Every assistant line of one response (`message.id`) goes into one message,
    even when tool results were written between them (they follow it);
    consecutive user lines make one user message, as a list of blocks (a lone
    user line with string content stays a string), the last text block of each
    but the last ending with a newline. A message is given once no later line can
    change it: from the start of the next response (or the next message, before the
    first response), so memory holds one response and its results.
    """
    held: list[dict[str, Any]] = []  # the messages a later line may still change
    turn: dict[str, Any] | None = None  # the assistant message of the current response
    turn_id: object = None
    for event in events:
        data = event.data
        message = data.get("message") or {}
        role = message.get("role") or data.get("type")
        content = message.get("content")
        same_response = turn_id is not None and message.get("id") == turn_id
        if role == "assistant" and turn is not None and same_response:
            turn["content"] = blocks_of(turn["content"]) + blocks_of(content)
            continue
        if role == "user" and held and held[-1]["role"] == "user":
            earlier = [dict(b) for b in blocks_of(held[-1]["content"])]
            if earlier and earlier[-1].get("type") == "text":
                earlier[-1]["text"] = f"{earlier[-1].get('text', '')}\n"  # the client's joint
            held[-1]["content"] = earlier + blocks_of(content)
            continue
        new = {"role": role, "content": content}
        if role == "assistant" or turn is None:
            yield from held
            held = []
        held.append(new)
        if role == "assistant":
            turn, turn_id = new, message.get("id")
    yield from held
