"""A Claude Code view as chat messages: the Messages API list the client sends
(`claude_code.api_messages`), mapped block by block to the OpenAI chat format.

The mapping (the same one the real-client tests apply to what the client sends):
- a message's text blocks become its content: a string for one block, a list of
  `{"type": "text"}` parts for several, `""` for none; an `image` block becomes an
  `image_url` part (a data URL), which makes the content a list;
- an assistant's `tool_use` blocks become its `tool_calls` (arguments: the input as
  compact JSON); `thinking` blocks are left out (chat messages have no place for
  them, and Claude Code stores their text empty);
- a user message's `tool_result` blocks become `tool` messages (text parts joined
  by a newline, `name` the tool the call named), put right after the assistant
  message, and the rest of the user message follows them;
- text blocks that start with `<system-reminder>` are the client's own reminders
  and are left out; a message left empty is dropped.

Resume repairs (`resume_repairs`), as Claude Code makes them when it resumes a
session: calls still running when the session ended (their `tool_use` is after
the last user message and has no `tool_result`) get an error result saying the
call was interrupted, then a placeholder assistant reply, both written to the
session by the client before the new prompt. They are reported as inserted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, cast

from condense_cli.core.events import Event
from condense_cli.core.jsonlines import as_dict, encode
from condense_cli.dialects.claude_code.events import ClaudeEvent, blocks_of
from condense_cli.dialects.claude_code.lines import tool_blocks
from condense_cli.llm.messages import SYNTHESIZED, Change, content_of, tool_call, tool_result

REMINDER = "<system-reminder>"
# What Claude Code (2.1.330) sends for a call that was running when the session ended,
# and the reply it puts after such results: the client's words, as it writes them.
INTERRUPTED = (
    "[Tool call interrupted: the session ended before this call's result was recorded, "
    "so its outcome is unknown. Check whether it took effect before relying on it or "
    "running it again.]"
)
NO_RESPONSE = "No response requested."


def _blocks(event: Event, kind: str) -> list[dict[str, Any]]:
    message = as_dict(event.data.get("message"))
    return [b for b in blocks_of(message.get("content")) if b.get("type") == kind]


def _line_facts(event: Event) -> tuple[bool, list[str]]:
    """Whether an event is a prompt (a user line with no `tool_result`), and the call
    ids its results answer; from its session line when it has one (not parsed)."""
    line = cast(ClaudeEvent, event).read_from
    if line is None:
        results = _blocks(event, "tool_result")
        prompt = event.data.get("type") == "user" and not results
        return prompt, [str(b.get("tool_use_id")) for b in results]
    answers = [str(call) for use, call in tool_blocks(line.tools) if not use] if line.tools else []
    return line.type == "user" and not answers, answers


def running_calls(events: list[Event]) -> list[tuple[Event, str]]:
    """The calls still running when the session ended: a `tool_use` after the last
    user message with no `tool_result`, with the assistant line that made it."""
    answered: set[str] = set()
    last_prompt = -1
    for index, event in enumerate(events):
        prompt, answers = _line_facts(event)
        answered.update(answers)
        if prompt:
            last_prompt = index
    return [
        (e, str(b.get("id")))
        for e in events[last_prompt + 1 :]
        if e.data.get("type") == "assistant"
        for b in _blocks(e, "tool_use")
        if str(b.get("id")) not in answered
    ]


def resume_repairs(events: list[Event]) -> tuple[list[Event], list[Change]]:
    """The view as the client sends it when it resumes, and what it put in."""
    running = running_calls(events)
    if not running:
        return events, []
    results = [
        {"type": "tool_result", "content": INTERRUPTED, "is_error": True, "tool_use_id": call}
        for _, call in running
    ]
    user = {"type": "user", "message": {"role": "user", "content": results}}
    reply = {
        "type": "assistant",
        "message": {"role": "assistant", "content": [{"type": "text", "text": NO_RESPONSE}]},
    }
    changes = [
        Change(
            SYNTHESIZED,
            event.id,
            cast(ClaudeEvent, event).line,
            f"tool_use {call} was still running when the session ended: Claude Code answers "
            "it with an interrupted-call error when the session resumes",
        )
        for event, call in running
    ]
    changes.append(
        Change(SYNTHESIZED, None, None, f'the reply "{NO_RESPONSE}" Claude Code adds after them')
    )
    added: list[Event] = [ClaudeEvent(user, None, None), ClaudeEvent(reply, None, None)]
    return [*events, *added], changes


def _part(block: dict[str, Any]) -> dict[str, Any] | None:
    """A text or image block as a chat content part (None for anything else)."""
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        if block["text"].startswith(REMINDER):
            return None
        return {"type": "text", "text": block["text"]}
    if kind == "image":
        source = as_dict(block.get("source"))
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        else:
            url = str(source.get("url", ""))
        return {"type": "image_url", "image_url": {"url": url}}
    return None


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(
        str(b["text"])
        for b in blocks_of(content)
        if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def chat_messages(api: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages API messages (`role`, `content`) as chat messages (see the module doc)."""
    return list(each_chat_message(api))


def each_chat_message(api: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`chat_messages`, one at a time (the names of the calls so far are kept)."""
    names: dict[str, str] = {}
    for message in api:
        blocks = blocks_of(message.get("content"))
        parts = [p for p in map(_part, blocks) if p is not None]
        if message.get("role") == "assistant":
            calls = []
            for block in blocks:
                if block.get("type") == "tool_use":
                    call_id, name = str(block.get("id", "")), str(block.get("name", ""))
                    names[call_id] = name
                    arguments = encode(block.get("input")).decode()
                    calls.append(tool_call(call_id, name, arguments))
            chat: dict[str, Any] = {"role": "assistant", "content": content_of(parts)}
            if calls:
                chat["tool_calls"] = calls
            if parts or calls:
                yield chat
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id", ""))
                yield tool_result(call_id, names.get(call_id, ""), _result_text(block))
        if parts:
            yield {"role": str(message.get("role") or "user"), "content": content_of(parts)}
