"""What the model actually receives: a view as chat messages, and what that step lost.

A view is events; the model gets chat messages. Each dialect converts its view the
way its agent does (`Replay.messages`), into the OpenAI chat format litellm takes:
`{"role", "content"}` plus `tool_calls` on assistant messages and `tool_call_id` /
`name` on `tool` messages. Content is a string, or a list of parts when a message
carries images. The conversion also says what it changed on the way: events it
dropped (a tool result whose call is gone, a call that never got its result, ...)
and messages it put in (a re-inserted first user message, a synthesized result).

Token counts follow litellm's `token_counter` for chat messages: 3 tokens per
message, the tokens of every string value (role, content, name, tool_call_id),
one more for a name, the arguments of each tool call, and 3 to prime the reply.
Tool schemas are not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from condense_cli.llm.tokens import Tokenizer

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3


# Kinds of change. Dropped: context the model silently loses (`check` warns) ...
ORPHAN = "orphan result"  # a tool result whose call is not in the messages
UNMATCHED = "unmatched call"  # a tool call that never got (all) its results
LOST = frozenset({ORPHAN, UNMATCHED})
# ... or an event the agent never turns into a message at all ...
NOT_SENT = "not sent"
# ... or one it sends in a form a chat message cannot carry (encrypted reasoning).
NO_CHAT_FORM = "no chat form"
# Put in: a message with no event of its own in the view.
REINSERTED = "re-inserted"
SYNTHESIZED = "synthesized"
# Sent, but rendered by the agent in a way condense only approximates.
APPROXIMATED = "approximated"


@dataclass(frozen=True, slots=True)
class Change:
    """One event the conversion dropped, one message it put in, or one it only
    approximates.

    `event` is the event's id as the log shows it (None for a message that has
    no event of its own), `line` where the log holds it (for `check`), `path` the
    file when a log is several files, and `reason` what happened and why.
    """

    kind: str
    event: object
    line: int | None
    reason: str
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "event": self.event, "line": self.line, "reason": self.reason}


@dataclass
class Conversion:
    """A view as chat messages, and what the conversion dropped, put in or approximated."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[Change] = field(default_factory=list)
    inserted: list[Change] = field(default_factory=list)
    approximated: list[Change] = field(default_factory=list)

    def extend(self, other: Conversion) -> None:
        """Add the conversion of the part of a view that follows this one's."""
        self.messages += other.messages
        self.dropped += other.dropped
        self.inserted += other.inserted
        self.approximated += other.approximated

    @property
    def lost(self) -> list[Change]:
        """What the model silently loses: results without calls, calls without results."""
        return [c for c in self.dropped if c.kind in LOST]

    def report(self) -> dict[str, Any]:
        """What changed, for `stats --format json`."""
        return {
            "dropped": [c.to_dict() for c in self.dropped],
            "inserted": [c.to_dict() for c in self.inserted],
            "approximated": [c.to_dict() for c in self.approximated],
        }


def text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": text}


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """One entry of an assistant message's `tool_calls`."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool_result(call_id: str, name: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": call_id, "name": name}


def content_of(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A message's `content`: a plain string for one text part, else the list of parts."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0]["type"] == "text":
        return str(parts[0]["text"])
    return parts


def content_text(content: Any) -> str:
    """The text of a message's content: the string, or its text parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def message_text(message: dict[str, Any]) -> str:
    """Everything the model reads of a message: its content and its calls' arguments."""
    parts = [content_text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        parts.append(str((call.get("function") or {}).get("arguments", "")))
    return "\n".join(p for p in parts if p)


def _token_texts(message: dict[str, Any]) -> tuple[list[str], int]:
    """The strings litellm tokenizes for one message, and its fixed overhead."""
    texts: list[str] = []
    overhead = TOKENS_PER_MESSAGE
    for key, value in message.items():
        if value is None:
            continue
        if key == "tool_calls":
            texts += [str((c.get("function") or {}).get("arguments", "")) for c in value]
        elif isinstance(value, str):
            texts.append(value)
            overhead += TOKENS_PER_NAME if key == "name" else 0
        elif key == "content" and isinstance(value, list):
            texts += [p["text"] for p in value if isinstance(p, dict) and "text" in p]
    return texts, overhead


def fingerprint(text: str) -> int:
    """A text's key among the texts already tokenized (`Known`): its length and its
    hash, so that the counts of long texts are remembered without the texts. Two
    texts of one length share a key with odds of 2**-64 a pair; the hash is the
    process's own, shared by the children it forks, never sent further."""
    return fingerprint_of(len(text), hash(text))


def fingerprint_of(length: int, text_hash: int) -> int:
    """`fingerprint` of a text of `length` characters and `hash(text)` `text_hash`."""
    return length << 64 | text_hash & 0xFFFF_FFFF_FFFF_FFFF


# The tokens of texts already counted, by `fingerprint`
Known = Mapping[int, int]
NONE_KNOWN: Known = MappingProxyType({})


def count_tokens(
    messages: Iterable[dict[str, Any]], tokenizer: Tokenizer, known: Known = NONE_KNOWN
) -> int:
    """Tokens of `messages` as litellm's `token_counter` counts them (no tool schemas);
    a text in `known` is not tokenized again."""
    return REPLY_PRIMING + sum(message_tokens(m, tokenizer, known) for m in messages)


def message_tokens(message: dict[str, Any], tokenizer: Tokenizer, known: Known) -> int:
    """One message's share of `count_tokens`."""
    texts, total = _token_texts(message)
    for text in texts:
        tokens = known.get(fingerprint(text)) if known else None
        total += tokenizer.count(text) if tokens is None else tokens
    return total


@dataclass
class MessageSums:
    """Messages counted: how many, their characters, and their tokens (with a
    tokenizer; the reply's priming is added once, by `numbers`)."""

    count: int = 0
    chars: int = 0
    tokens: int = 0

    def add(
        self,
        messages: Iterable[dict[str, Any]],
        tokenizer: Tokenizer | None,
        known: Known = NONE_KNOWN,
    ) -> None:
        """Count `messages`, in one pass (they may be made as they are taken; `known`:
        texts already tokenized)."""
        for message in messages:
            self.count += 1
            self.chars += len(message_text(message))
            if tokenizer is not None:
                self.tokens += message_tokens(message, tokenizer, known)

    def merge(self, other: MessageSums) -> None:
        """Add the counts of other messages."""
        self.count += other.count
        self.chars += other.chars
        self.tokens += other.tokens

    def numbers(self, conversion: Conversion, counted_tokens: bool) -> dict[str, Any]:
        """The `messages` part of `condense stats` (`conversion`: what was changed)."""
        return {
            "count": self.count,
            "chars": self.chars,
            "tokens": REPLY_PRIMING + self.tokens if counted_tokens else None,
            "tool_schemas": "not counted",
            **conversion.report(),
        }
