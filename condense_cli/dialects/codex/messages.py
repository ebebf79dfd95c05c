"""A Codex view as chat messages: the Responses API items the client sends,
mapped item by item to the OpenAI chat format.

The mapping (the same one the real-client tests apply to what the client sends):
- a `message` keeps its role (`developer` becomes `system`); its text parts
  (`input_text`, `output_text`, empty ones left out) become its content, a string
  for one part and a list of text parts for several; `input_image` parts become
  `image_url` parts;
- calls (`function_call`, `custom_tool_call`, `local_shell_call`,
  `tool_search_call`) become `tool_calls` of one assistant message: they join the
  assistant message right before them, else start one; the arguments are the
  call's `arguments` (a custom tool's raw `input`, other calls' fields as JSON);
- outputs become `tool` messages (text parts joined by a newline, `name` the
  call's name). A call that has no output in the view gets the output "aborted"
  right after its message, as Codex sends it (reported as synthesized); an output
  whose call is not in the view is dropped (reported);
- `reasoning` items are left out (chat messages have no place for them, and their
  content is encrypted); so are encrypted `compaction` summaries and the other
  items with no text (`web_search_call`, `image_generation_call`, and the
  `additional_tools` item, whose tool schemas are not counted), each reported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from condense_cli.core.jsonlines import encode
from condense_cli.core.messages import (
    NO_CHAT_FORM,
    ORPHAN,
    SYNTHESIZED,
    Change,
    Conversion,
    content_of,
    tool_call,
    tool_result,
)
from condense_cli.dialects.codex.items import CALLS, OUTPUTS

TEXT_PARTS = frozenset({"input_text", "output_text", "text"})
ABORTED = "aborted"  # the output Codex sends for a call that has none
CALL_FIELDS = frozenset({"type", "id", "call_id", "status", "name"})


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else ():
        if not isinstance(part, dict):
            continue
        if part.get("type") in TEXT_PARTS and isinstance(part.get("text"), str):
            if part["text"]:
                parts.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "input_image":
            parts.append({"type": "image_url", "image_url": {"url": str(part.get("image_url"))}})
    return parts


def _call(item: dict[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    if kind == "function_call" and isinstance(item.get("arguments"), str):
        arguments = item["arguments"]
    elif kind == "custom_tool_call" and isinstance(item.get("input"), str):
        arguments = item["input"]
    else:
        fields = {k: v for k, v in item.items() if k not in CALL_FIELDS}
        arguments = encode(fields).decode()
    given = item.get("name")
    name = given if isinstance(given, str) else str(kind).removesuffix("_call")
    return tool_call(str(item.get("call_id", "")), name, arguments)


def with_outputs(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The items with the output "aborted" right after each call that has none, as
    Codex sends them, and the ids of those calls."""
    answered = {str(i.get("call_id")) for i in items if i.get("type") in OUTPUTS}
    out: list[dict[str, Any]] = []
    aborted: list[str] = []
    for item in items:
        out.append(item)
        call_id = str(item.get("call_id"))
        if item.get("type") in CALLS and call_id not in answered:
            kind = "custom_tool_call_output" if item["type"] == "custom_tool_call" else None
            out.append(
                {"type": kind or "function_call_output", "call_id": call_id, "output": ABORTED}
            )
            aborted.append(call_id)
    return out, aborted


def convert(
    items: list[dict[str, Any]],
    where: Callable[[dict[str, Any]], tuple[object, int | None]] | None = None,
) -> Conversion:
    """Response items as chat messages (see the module doc). `where(item)` gives the
    id and line of an item of the view, for the report."""
    out = Conversion()
    messages = out.messages
    locate = where or (lambda _: (None, None))
    sent, aborted = with_outputs(items)
    out.inserted += [
        Change(
            SYNTHESIZED, None, None, f'call {call} has no output: Codex sends "{ABORTED}" for it'
        )
        for call in aborted
    ]
    names: dict[str, str] = {}
    for item in sent:
        kind = item.get("type")
        if kind in CALLS:
            call = _call(item)
            names[call["id"]] = call["function"]["name"]
            last = messages[-1] if messages else None
            if last is None or last["role"] != "assistant":
                last = {"role": "assistant", "content": ""}
                messages.append(last)
            last.setdefault("tool_calls", []).append(call)
        elif kind in OUTPUTS:
            call_id = str(item.get("call_id"))
            if call_id not in names:
                event, line = locate(item)
                reason = f"output for call {call_id}: the call is not in the view"
                out.dropped.append(Change(ORPHAN, event, line, reason))
                continue
            text = "\n".join(p["text"] for p in _parts(item.get("output")) if "text" in p)
            messages.append(tool_result(call_id, names[call_id], text))
        elif kind == "message":
            role = str(item.get("role") or "user")
            role = "system" if role == "developer" else role
            messages.append({"role": role, "content": content_of(_parts(item.get("content")))})
        else:
            event, line = locate(item)
            reason = (
                "an encrypted summary: it has no text a chat message can carry"
                if kind in ("compaction", "compaction_summary")
                else f"a {kind} item has no text a chat message can carry"
            )
            out.dropped.append(Change(NO_CHAT_FORM, event, line, reason))
    return out
