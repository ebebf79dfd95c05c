"""An OpenHands V0 view as the chat messages its agent sends (`ConversationMemory`).

The rules, as OpenHands V0's CodeAct agent applies them to the condensed history:

- the system message comes first: when the view has none, OpenHands puts its own
  system prompt there (condense shows the log's first system message instead);
  the first user message of the whole history is put second when the view's
  second event is not a user message;
- an action with `tool_call_metadata` is not sent on its own: the model response
  that issued it (`tool_call_metadata.model_response`) becomes one assistant
  message with all its `tool_calls`, held back until every one of those calls
  has its observation, then sent followed by those observations as `tool`
  messages. Observations and calls that never complete a response are dropped,
  and so is any call or `tool` message left without its partner;
- an agent's `finish` is an assistant message (its thought and the response's
  text), a `message` is a user or assistant message, a user's `run` and every
  observation without tool metadata are user messages, the summary is a user
  message;
- consecutive user messages are separated by a blank line at the start of the
  later one.

Text is rendered as OpenHands renders each event (a command's output with its
working directory and exit code, an error with its marker, ...). What condense
does not reproduce: OpenHands' prompt templates for `recall` observations (the
observation's content is shown, marked approximated), diffs of edits not made by
its ACI editor, images, and the cut of observations longer than
`max_message_chars` (30,000 by default).

A log without model responses (hand-written) gets one response per call: the
action's thought as text, its arguments as the call's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from condense_cli.core.events import Event
from condense_cli.core.jsonlines import as_dict, as_str, encode
from condense_cli.llm.messages import (
    APPROXIMATED,
    NOT_SENT,
    ORPHAN,
    REINSERTED,
    UNMATCHED,
    Change,
    Conversion,
    text_message,
    tool_call,
    tool_result,
)

# Actions the agent issues as tool calls (a user's `run` is not one of them).
TOOL_ACTIONS = frozenset(
    {
        "delegate",
        "think",
        "run_ipython",
        "edit",
        "read",
        "browse_interactive",
        "browse",
        "call_tool_mcp",
        "task_tracking",
        "run",
    }
)
# Observations sent as their content.
CONTENT_OBSERVATIONS = frozenset(
    {"read", "browse", "think", "task_tracking", "condense", "download", "mcp"}
)
IMAGE_LINE = "![image](data:image/png;base64,"


@dataclass
class Response:
    """One model response: its assistant message and the actions of it in the view."""

    message: dict[str, Any]
    events: list[Event]

    @property
    def call_ids(self) -> list[str]:
        return [c["id"] for c in self.message.get("tool_calls") or ()]


def response_of(event: Event) -> tuple[str, dict[str, Any]]:
    """The id of the model response that issued a tool action, and its assistant message."""
    meta = as_dict(event.data.get("tool_call_metadata"))
    response = as_dict(meta.get("model_response"))
    choices = response.get("choices")
    message = as_dict(choices[0].get("message")) if isinstance(choices, list) and choices else {}
    calls = message.get("tool_calls")
    if isinstance(response.get("id"), str) and isinstance(calls, list):
        content = as_str(message.get("content"))
        return response["id"], {
            "role": "assistant",
            "content": content if content.strip() else "",
            "tool_calls": [_call(c) for c in calls if isinstance(c, dict)],
        }
    call_id = event.tool_call_id or ""
    args = {k: v for k, v in as_dict(event.data.get("args")).items() if k != "thought"}
    name = as_str(meta.get("function_name")) or event.type
    return f"call:{call_id}", {
        "role": "assistant",
        "content": event.thought,
        "tool_calls": [tool_call(call_id, name, encode(args).decode())],
    }


def _call(call: dict[str, Any]) -> dict[str, Any]:
    function = as_dict(call.get("function"))
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = encode(arguments).decode() if arguments is not None else ""
    return tool_call(as_str(call.get("id")), as_str(function.get("name")), arguments)


def _with_call(kept: dict[str, Any], mine: dict[str, Any], call_id: str | None) -> dict[str, Any]:
    """A response's message as `kept`, with the call `call_id` as `mine` holds it (every
    action of a response holds a copy of it; a condenser may have rewritten its own
    call in its copy, `Event.inputs_cleared`)."""
    own = [c for c in mine.get("tool_calls") or () if c["id"] == call_id]
    if not own:
        return kept
    calls = [own[0] if c["id"] == call_id else c for c in kept.get("tool_calls") or ()]
    return {**kept, "tool_calls": calls}


def command_output(event: Event) -> str:
    """A command's output as the agent reads it: prefix, output, suffix, then its
    working directory, interpreter and exit code when known."""
    extras = as_dict(event.data.get("extras"))
    meta = as_dict(extras.get("metadata"))
    text = f"{as_str(meta.get('prefix'))}{event.text}{as_str(meta.get('suffix'))}"
    if as_str(meta.get("working_dir")):
        text += f"\n[Current working directory: {meta['working_dir']}]"
    if as_str(meta.get("py_interpreter_path")):
        text += f"\n[Python interpreter: {meta['py_interpreter_path']}]"
    code = meta.get("exit_code", extras.get("exit_code", -1))
    if isinstance(code, int) and not isinstance(code, bool) and code != -1:
        text += f"\n[Command finished with exit code {code}]"
    return text


def observation_text(event: Event) -> tuple[str | None, bool]:
    """(the text OpenHands sends for an observation, whether condense only
    approximates it); None when OpenHands sends nothing for it."""
    kind, text = event.type, event.text
    extras = as_dict(event.data.get("extras"))
    if kind == "run":
        output = command_output(event)
        if event.tool_call_id is None:
            return f"\nObserved result of command executed by user:\n{output}", False
        return output, False
    if kind == "run_ipython":
        lines = [
            f"{IMAGE_LINE} ...) already displayed to user" if IMAGE_LINE in line else line
            for line in text.split("\n")
        ]
        return "\n".join(lines), False
    if kind == "edit":
        if extras.get("impl_source") == "oh_aci":
            return text, False
        if extras.get("prev_exist") is False:
            path = as_str(extras.get("path"))
            return f"[New file {path} is created with the provided content.]\n", False
        return text, True  # OpenHands shows a diff of the edit
    if kind == "delegate":
        outputs = as_dict(extras.get("outputs"))
        return as_str(outputs.get("content", text)) or text, False
    if kind == "error":
        return f"{text}\n[Error occurred in processing last action]", False
    if kind == "user_rejected":
        return f"OBSERVATION:\n{text}\n[Last action has been rejected by the user]", False
    if kind in CONTENT_OBSERVATIONS:
        return text, False
    if kind == "recall":
        return (text, True) if _has_context(extras) else (None, False)
    return None, False


def _has_context(extras: dict[str, Any]) -> bool:
    """Whether a recall observation brings anything OpenHands would show."""
    if extras.get("recall_type") == "knowledge":
        return bool(extras.get("microagent_knowledge"))
    keys: tuple[str, ...] = ("repo_name", "repo_directory", "repo_instructions", "runtime_hosts")
    keys += ("date", "additional_agent_instructions", "conversation_instructions")
    keys += ("microagent_knowledge",)
    return any(extras.get(k) for k in keys)


def action_message(event: Event) -> dict[str, Any] | None:
    """The message of an action that is not a tool call; None when none is sent."""
    kind, args = event.type, as_dict(event.data.get("args"))
    role = "user" if event.source == "user" else "assistant"
    if kind == "system":
        return text_message("system", as_str(args.get("content")))
    if kind == "message":
        return text_message(role, as_str(args.get("content")))
    if kind == "finish":
        thought = as_str(args.get("thought"))
        if event.data.get("tool_call_metadata") is not None:
            _, response = response_of(event)
            content = as_str(response.get("content"))
            if thought and thought != content:
                thought = f"{thought}\n{content}"
            elif not thought:
                thought = content
        return text_message(role, thought)
    if kind == "run" and event.source == "user":
        return text_message("user", f"User executed the command:\n{event.text}")
    if kind in TOOL_ACTIONS and event.source == "user" and event.tool_call_id is None:
        return text_message("user", f"User requested to read file: {event.text}")
    return None


def is_tool_action(event: Event) -> bool:
    if event.type not in TOOL_ACTIONS:
        return False
    return event.source == "agent" or event.data.get("tool_call_metadata") is not None


def is_user_message(event: Event) -> bool:
    return event.is_action and event.type == "message" and event.source == "user"


def convert(events: list[Event], system: Event | None, first_user: Event | None) -> Conversion:
    """The messages OpenHands V0 sends for a view of `events`. `system` and
    `first_user` are the log's first system and user messages (they may have been
    forgotten), put back where OpenHands puts them."""
    out = Conversion()
    events = list(events)
    if not any(e.is_action and e.type == "system" for e in events):
        if system is not None:
            events.insert(0, system)
            out.inserted.append(
                Change(
                    REINSERTED,
                    system.id,
                    None,
                    "the view has no system message: OpenHands puts its system prompt first "
                    "(shown here as the log's first system message)",
                )
            )
        else:
            out.approximated.append(
                Change(
                    APPROXIMATED,
                    None,
                    None,
                    "the log has no system message: OpenHands puts its own system prompt "
                    "first, which condense cannot show",
                )
            )
    # the first user message belongs second, after the system prompt (which
    # OpenHands puts first even when the log has none to show)
    at = 1 if any(e.is_action and e.type == "system" for e in events) else 0
    missing = len(events) == at or not is_user_message(events[at])
    if missing and first_user is not None:
        events.insert(at, first_user)
        out.inserted.append(
            Change(
                REINSERTED,
                first_user.id,
                None,
                "the view's second event is not a user message: OpenHands puts the "
                "first user message of the history there",
            )
        )
    _convert_events(events, out)
    _separate_user_messages(out.messages)
    return out


def _convert_events(events: list[Event], out: Conversion) -> None:
    pending: dict[str, Response] = {}
    results: dict[str, tuple[dict[str, Any], Event]] = {}
    messages = out.messages
    for event in events:
        ready: list[dict[str, Any]] = []
        if event.is_action and is_tool_action(event):
            if event.data.get("tool_call_metadata") is None:
                out.dropped.append(
                    Change(
                        NOT_SENT,
                        event.id,
                        None,
                        f"{event.type} action without tool_call_metadata: OpenHands' "
                        "function-calling agent cannot send it",
                    )
                )
                continue
            response_id, message = response_of(event)
            waiting = pending.get(response_id)
            if waiting is not None:  # each call as its own action holds it
                message = _with_call(waiting.message, message, event.tool_call_id)
            pending[response_id] = Response(message, (waiting.events if waiting else []) + [event])
        elif event.is_action:
            said = action_message(event)
            if said is None:
                out.dropped.append(
                    Change(
                        NOT_SENT,
                        event.id,
                        None,
                        f"OpenHands sends no message for a {event.type} action",
                    )
                )
                continue
            ready.append(said)
        else:
            text, approximate = observation_text(event)
            if text is None:
                out.dropped.append(
                    Change(
                        NOT_SENT,
                        event.id,
                        None,
                        f"OpenHands sends no message for a {event.type} observation",
                    )
                )
                continue
            if approximate:
                out.approximated.append(
                    Change(
                        APPROXIMATED,
                        event.id,
                        None,
                        f"a {event.type} observation: OpenHands renders it with its own "
                        "template; shown as its content",
                    )
                )
            meta = as_dict(event.data.get("tool_call_metadata"))
            if event.data.get("tool_call_metadata") is not None:
                call_id = event.tool_call_id or ""
                name = as_str(meta.get("function_name"))
                results[call_id] = (tool_result(call_id, name, text), event)
            else:
                ready.append(text_message("user", text))
        for response_id, response in list(pending.items()):
            if all(call in results for call in response.call_ids):
                ready.append(response.message)
                ready += [results.pop(call)[0] for call in response.call_ids]
                del pending[response_id]
        messages += ready
    held: dict[str, list[str]] = {}  # call id -> the calls its response still waits for
    for response in pending.values():
        missing = [c for c in response.call_ids if c not in results]
        for call_id in response.call_ids:
            held[call_id] = missing
        for event in response.events:
            out.dropped.append(
                Change(
                    UNMATCHED,
                    event.id,
                    None,
                    f"tool call {event.tool_call_id} is never sent: its model response also "
                    f"made call(s) {', '.join(missing)}, which have no observation in the view",
                )
            )
    for call_id, (_, event) in results.items():
        if call_id in held:
            reason = (
                f"observation for tool call {call_id} is never sent: its call waits for "
                f"call(s) {', '.join(held[call_id])}, which have no observation in the view"
            )
            out.dropped.append(Change(UNMATCHED, event.id, None, reason))
        else:
            reason = f"observation for tool call {call_id}: its action is not in the view"
            out.dropped.append(Change(ORPHAN, event.id, None, reason))
    out.dropped.sort(key=lambda c: c.event if isinstance(c.event, int) else -1)
    out.messages = _matched(messages)


def _matched(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Without `tool` messages whose call is not sent and calls without a `tool`
    message (OpenHands' last filter; the holding above leaves it little to do)."""
    calls = {
        c["id"]
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
        if c["id"]
    }
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool" and m["tool_call_id"]}
    kept: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "tool" and message["tool_call_id"]:
            if message["tool_call_id"] in calls:
                kept.append(message)
        elif message["role"] == "assistant" and message.get("tool_calls"):
            matched = [c for c in message["tool_calls"] if c["id"] in answered]
            if matched:
                kept.append({**message, "tool_calls": matched})
        else:
            kept.append(message)
    return kept


def _separate_user_messages(messages: list[dict[str, Any]]) -> None:
    """A user message right after another starts with a blank line."""
    previous = None
    for message in messages:
        if message["role"] == "user" and previous == "user":
            message["content"] = "\n\n" + message["content"]
        previous = message["role"]
