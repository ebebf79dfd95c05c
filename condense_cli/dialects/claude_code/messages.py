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
"""

from __future__ import annotations

from typing import Any

from condense_cli.core.jsonlines import as_dict, encode
from condense_cli.core.messages import content_of, tool_call, tool_result
from condense_cli.dialects.claude_code.events import blocks_of

REMINDER = "<system-reminder>"


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


def chat_messages(api: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages API messages (`role`, `content`) as chat messages (see the module doc)."""
    out: list[dict[str, Any]] = []
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
                out.append(chat)
            continue
        for block in blocks:
            if block.get("type") == "tool_result":
                call_id = str(block.get("tool_use_id", ""))
                out.append(tool_result(call_id, names.get(call_id, ""), _result_text(block)))
        if parts:
            out.append({"role": str(message.get("role") or "user"), "content": content_of(parts)})
    return out
