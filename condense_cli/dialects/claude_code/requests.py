"""The requests a session says it sent: Claude Code (2.1.330 on) records each main
request in the log itself, content-addressed, and `check` compares the view with
the last one (a second oracle, beside the real client's resume).

The records:
- `api-request-blob`: one message (`role`, `content`) under its `hash`, the SHA-256
  of the message as JSON with sorted keys and no spaces; a message the session
  already holds as lines is not stored again: its hash names a line's message (a
  text content as one text block) or a response's (its lines' blocks in order);
- `api-request-shape`: the request's `system` and `tools` under a `shapeHash`;
- `api-request`: one request, by `id`: its messages are the first `keep` messages
  of the request named by `base` (none without a base), then the blobs of `tail`
  in order; `cacheControl` says where `cache_control` marks were (not compared).
Requests of a subagent (`agentId`) are its own and left out. A request whose base
or shape is missing is incomplete and not compared; a message it names that no
record, line or response holds is looked for among the view's messages (the
client does not record the messages it merged from lines), else it differs.

What the comparison ignores, all of it the client's own text (`comparable`):
messages of the role `system` (its rendering of attachment lines); text blocks that
start with `<system-reminder>`, and such a reminder appended to a tool result's
text; the `Tool loaded.` text after a result holding `tool_reference` blocks, and
those references naming a tool the request does not offer; the `cache_control` and
`caller` keys on blocks. On condense's side, lines from a task notification
(`origin.kind`) are left out: the client sends them only inside a reminder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import Problem
from condense_cli.core.jsonlines import as_dict
from condense_cli.dialects.claude_code.events import MESSAGE_TYPES, api_messages, blocks_of
from condense_cli.dialects.claude_code.messages import REMINDER

if TYPE_CHECKING:
    from condense_cli.core.events import Event
    from condense_cli.dialects.claude_code.events import ClaudeEvent
    from condense_cli.dialects.claude_code.lines import Line

BLOB, SHAPE, REQUEST = "api-request-blob", "api-request-shape", "api-request"
MAX_BASES = 100_000  # a chain of bases longer than this (or a loop) is not followed
TOOL_LOADED = "Tool loaded."
DROPPED_KEYS = ("cache_control", "caller")
UNKNOWN = "unrecorded"  # a message the request names that nothing here holds


@dataclass(frozen=True)
class RecordedRequest:
    """A request rebuilt from the log's records: where it is, what it sent (or,
    when it is incomplete, what is missing)."""

    line: int
    messages: list[dict[str, Any]]
    tools: set[str]
    missing: str | None = None


def last_request(lines: list[Line]) -> Line | None:
    """The last main request the session recorded (None: it records none)."""
    last = None
    for line in lines:
        if line.type == REQUEST and not line.data.get("agentId"):
            last = line
    return last


def rebuild(lines: list[Line], last: Line, view: list[dict[str, Any]]) -> RecordedRequest:
    """The request at `last` rebuilt from the session's records, its lines and the
    `view`'s API messages; a message found nowhere is kept as `UNKNOWN`."""
    requests = {
        line.data["id"]: line
        for line in lines
        if line.type == REQUEST and isinstance(line.data.get("id"), str)
    }
    chain = [last]  # the request, its base, the base's base, ...
    while (base := chain[-1].data.get("base")) is not None:
        found = requests.get(base) if isinstance(base, str) else None
        if found is None or len(chain) > MAX_BASES or found in chain:
            return RecordedRequest(last.number, [], set(), f"its base request {base}")
        chain.append(found)
    needed = {h for x in chain for h in x.data.get("tail") or () if isinstance(h, str)}
    shape_hash = last.data.get("shapeHash")
    blobs: dict[str, dict[str, Any]] = {}
    tools: set[str] | None = None
    for line in lines:
        if line.type == BLOB and line.data.get("hash") in needed:
            blobs[line.data["hash"]] = as_dict(line.data.get("message"))
        elif line.type == SHAPE and line.data.get("shapeHash") == shape_hash:
            shape = as_dict(line.data.get("shape"))
            tools = {str(t.get("name")) for t in blocks_of(shape.get("tools"))}
    if tools is None:
        return RecordedRequest(last.number, [], set(), f"its shape {shape_hash}")
    if needed - blobs.keys():
        _add_lines(lines, needed, blobs)
    for message in view:
        if needed - blobs.keys():
            _add(message.get("role"), message.get("content"), needed, blobs)
    messages: list[dict[str, Any]] = []
    for request in reversed(chain):
        keep = request.data.get("keep")
        messages = messages[: keep if isinstance(keep, int) else 0]
        for key in request.data.get("tail") or ():
            unknown = {"role": UNKNOWN, "content": [{"type": UNKNOWN, "hash": key}]}
            messages.append(blobs.get(key, unknown))
    return RecordedRequest(last.number, messages, tools)


def message_hash(message: dict[str, Any]) -> str:
    """The hash a recorded request names a message by (see the module's docstring)."""
    return hashlib.sha256(orjson.dumps(message, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _add_lines(lines: list[Line], needed: set[str], blobs: dict[str, dict[str, Any]]) -> None:
    """Add the session's messages whose hash is `needed` to `blobs`: each message
    line's, and each response's (its assistant lines' blocks, in file order)."""
    responses: dict[str, list[Any]] = {}
    for line in lines:
        if line.type not in MESSAGE_TYPES:
            continue
        data = as_dict(line.data.get("message"))
        content = data.get("content")
        _add(data.get("role"), content, needed, blobs)
        if line.message_id is not None and isinstance(content, list):
            blocks = responses.setdefault(line.message_id, [])
            blocks += content
            _add(data.get("role"), list(blocks), needed, blobs)


def _add(role: Any, content: Any, needed: set[str], blobs: dict[str, dict[str, Any]]) -> None:
    """Add the message to `blobs` if its hash is `needed` (a text content is sent,
    and hashed, as one text block)."""
    forms = (
        [content, [{"type": "text", "text": content}]] if isinstance(content, str) else [content]
    )
    for form in forms:
        message = {"role": role, "content": form}
        key = message_hash(message)
        if key in needed:
            blobs[key] = message


def sent_events(events: Iterable[Event]) -> list[Event]:
    """The events the client sends as messages of their own (not task notifications)."""
    return [e for e in events if as_dict(e.data.get("origin")).get("kind") != "task-notification"]


def _clean(blocks: list[dict[str, Any]], tools: set[str]) -> list[dict[str, Any]]:
    """Blocks less the client's reminders and additions (see the module's docstring)."""
    references = any(
        isinstance(b.get("content"), list)
        and any(as_dict(x).get("type") == "tool_reference" for x in b["content"])
        for b in blocks
        if b.get("type") == "tool_result"
    )
    kept = []
    for block in blocks:
        block = {k: v for k, v in block.items() if k not in DROPPED_KEYS}
        text = block.get("text") if block.get("type") == "text" else None
        if isinstance(text, str) and (
            text.startswith(REMINDER) or (references and text == TOOL_LOADED)
        ):
            continue
        content = block.get("content")
        if block.get("type") == "tool_result" and isinstance(content, str):
            at = content.find(f"\n\n{REMINDER}\n")
            if at >= 0 and content.endswith("</system-reminder>"):
                block["content"] = content[:at]
        if block.get("type") == "tool_result" and isinstance(content, list):
            block["content"] = [
                x
                for x in blocks_of(content)
                if x.get("type") != "tool_reference" or x.get("tool_name") in tools
            ]
        kept.append(block)
    return kept


def comparable(messages: list[dict[str, Any]], tools: set[str]) -> list[dict[str, Any]]:
    """Messages as the comparison sees them (see the module's docstring)."""
    out = []
    for message in messages:
        if message.get("role") == "system":
            continue
        kept = _clean(blocks_of(message.get("content")), tools)
        if kept:
            out.append({"role": message.get("role"), "content": kept})
    return out


def differs(recorded: RecordedRequest, view: list[dict[str, Any]]) -> str | None:
    """How the view's API messages at the request differ from what it sent (None:
    they do not)."""
    sent = comparable(recorded.messages, recorded.tools)
    expected = comparable(view, recorded.tools)
    if sent == expected:
        return None
    at = next(
        (i for i, (a, b) in enumerate(zip(sent, expected, strict=False)) if a != b),
        min(len(sent), len(expected)),
    )
    if at < len(sent) and sent[at]["role"] == UNKNOWN:
        key = sent[at]["content"][0]["hash"]
        return (
            f"message {at + 1} is one (sha256 {key[:12]}...) that neither the session's "
            "records nor the view hold"
        )
    if at >= len(sent) or at >= len(expected):
        return f"the client sent {len(sent)} messages where the view has {len(expected)}"
    return f"message {at + 1} ({sent[at]['role']}) is not the view's"


def request_problems(
    lines: list[Line], view: Callable[[Line | None], list[ClaudeEvent]]
) -> list[Problem]:
    """`check`'s finding on the last recorded request; `view` gives the view whose
    newest message is the line it is given."""
    last = last_request(lines)
    if last is None:
        return []
    events = view(view_at(lines, last.number))
    expected = api_messages(sent_events(events))
    recorded = rebuild(lines, last, expected)
    if recorded.missing is not None:
        return [
            Problem(
                recorded.line,
                f"the request recorded here is incomplete ({recorded.missing} is not in the "
                "session): not compared with the view",
                "note",
            )
        ]
    wrong = differs(recorded, expected)
    if wrong is None:
        return []
    return [
        Problem(
            recorded.line,
            f"the view differs from what the client recorded sending here: {wrong}",
            "warning",
        )
    ]


def view_at(lines: list[Line], line: int) -> Line | None:
    """The newest main-chain message before `line` (where the request was sent from)."""
    leaf = None
    for candidate in lines:
        if candidate.number >= line:
            break
        if candidate.type in MESSAGE_TYPES and not candidate.sidechain:
            leaf = candidate
    return leaf
