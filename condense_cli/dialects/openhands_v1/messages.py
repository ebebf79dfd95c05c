"""An OpenHands V1 view as the chat messages the SDK sends (`events_to_messages`).

- consecutive `ActionEvent`s of one model response (`llm_response_id`) become one
  assistant message: the first one's thought as content, every call in
  `tool_calls`; a lone action is an assistant message with its one call;
- a tool result (`ObservationEvent`, `UserRejectObservation`, `AgentErrorEvent`)
  is a `tool` message with the call's id and the tool's name; a command's output
  is rendered as the SDK renders it (prefix, output, suffix, working directory,
  interpreter, exit code, and a first line when the command failed), an editor
  result is its error or its output, any other its text;
- a `SystemPromptEvent` is the system message (its prompt, then its dynamic
  context as a second part), a `MessageEvent` its own message (content, then
  `extended_content`), a summary a user message;
- with the multi-summary SDK (2026 on), a plain user message right after another
  joins it (so a summary beside a user message shares its turn).

Content is a string for one text part and a list of parts for several. Not
reproduced: reasoning and thinking blocks (chat messages have no place for them)
and the SDK's cut of very long outputs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense_cli.core.events import Event
from condense_cli.core.jsonlines import as_dict, as_str, encode
from condense_cli.dialects.openhands_v1.detect import ACTION, OBSERVATION_KINDS
from condense_cli.llm.messages import content_of, tool_call, tool_result


def _parts(content: Any) -> list[dict[str, Any]]:
    """Text and image parts of SDK content (a list of TextContent/ImageContent, or a string)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, dict):
        content = [content]
    parts: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else ():
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append({"type": "text", "text": item["text"]})
        for url in item.get("image_urls") or ():
            parts.append({"type": "image_url", "image_url": {"url": str(url)}})
    return parts


def _call(data: dict[str, Any]) -> dict[str, Any]:
    """An action's tool call: `{id, name, arguments}` now, litellm's shape in 2025."""
    call = as_dict(data.get("tool_call"))
    function = as_dict(call.get("function"))
    name = as_str(call.get("name")) or as_str(function.get("name")) or as_str(data.get("tool_name"))
    arguments = call.get("arguments", function.get("arguments"))
    if not isinstance(arguments, str):
        arguments = encode(arguments).decode() if arguments is not None else ""
    call_id = as_str(call.get("id")) or as_str(data.get("tool_call_id"))
    return tool_call(call_id, name, arguments)


def command_output(observation: dict[str, Any]) -> str:
    """A 2025 `ExecuteBashObservation` as the agent reads it."""
    meta = as_dict(observation.get("metadata"))
    prefix, suffix = as_str(meta.get("prefix")), as_str(meta.get("suffix"))
    text = f"{prefix}{as_str(observation.get('output'))}{suffix}"
    if as_str(meta.get("working_dir")):
        text += f"\n[Current working directory: {meta['working_dir']}]"
    if as_str(meta.get("py_interpreter_path")):
        text += f"\n[Python interpreter: {meta['py_interpreter_path']}]"
    code = meta.get("exit_code", -1)
    if isinstance(code, int) and not isinstance(code, bool) and code != -1:
        text += f"\n[Command finished with exit code {code}]"
    if observation.get("error") is True:
        text = f"[There was an error during command execution.]\n{text}"
    return text


def result_text(event: Event) -> str:
    """What the model reads of a tool result."""
    observation = as_dict(event.data.get("observation"))
    kind = observation.get("kind")
    if kind == "ExecuteBashObservation" and isinstance(observation.get("output"), str):
        return command_output(observation)
    if kind == "StrReplaceEditorObservation" and isinstance(observation.get("output"), str):
        return as_str(observation.get("error")) or observation["output"]
    return event.text


def message_of(event: Event) -> dict[str, Any]:
    """The chat message of one event that is not a tool call."""
    data, kind = event.data, event.data.get("kind")
    if kind in OBSERVATION_KINDS:
        name = as_str(data.get("tool_name"))
        return tool_result(event.tool_call_id or "", name, result_text(event))
    if kind == "SystemPromptEvent":
        parts = _parts(data.get("system_prompt")) + _parts(data.get("dynamic_context"))
        return {"role": "system", "content": content_of(parts)}
    if kind == "MessageEvent":
        message = as_dict(data.get("llm_message"))
        parts = _parts(message.get("content")) + _parts(data.get("extended_content"))
        return {"role": as_str(message.get("role")) or "user", "content": content_of(parts)}
    return {"role": "user", "content": event.text}  # a summary


def convert(events: Sequence[Event], merge_user_turns: bool) -> list[dict[str, Any]]:
    """The messages for a V1 view of `events` (see the module doc)."""
    return list(each_message(events, merge_user_turns))


def each_message(events: Sequence[Event], merge_user_turns: bool) -> Iterator[dict[str, Any]]:
    """`convert`, one message at a time: a message is given once the next cannot join
    it, and an event's data is read once (a view's events may read theirs back)."""
    last: dict[str, Any] | None = None
    i = 0
    while i < len(events):
        data = events[i].data
        message: dict[str, Any]
        if data.get("kind") == ACTION:
            batch = [data]  # the calls of one model response
            response = data.get("llm_response_id")
            while i + len(batch) < len(events):
                following = events[i + len(batch)].data
                if following.get("kind") != ACTION or following.get("llm_response_id") != response:
                    break
                batch.append(following)
            message = {
                "role": "assistant",
                "content": content_of(_parts(data.get("thought"))),
                "tool_calls": [_call(d) for d in batch],
            }
            i += len(batch)
        else:
            message = message_of(events[i])
            i += 1
        if merge_user_turns and last is not None and _plain_user(last) and _plain_user(message):
            last["content"] = _as_parts(last["content"]) + _as_parts(message["content"])
            continue
        if last is not None:
            yield last
        last = message
    if last is not None:
        yield last


def _plain_user(message: dict[str, Any]) -> bool:
    return message["role"] == "user" and not ({"tool_calls", "tool_call_id", "name"} & set(message))


def _as_parts(content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
