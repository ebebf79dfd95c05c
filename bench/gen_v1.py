"""Generate OpenHands V1 (software-agent-sdk) conversations for the benchmark.

A conversation as the current SDK writes one: `base_state.json` and `events/` with
one `event-NNNNN-<uuid>.json` per event (and the SDK's `events/.eventlog.lock`),
each event serialised the way the SDK's event log does it (Python's `json.dumps`:
`", "` separators, non-ASCII written as `\\uXXXX`). The same events can be written
one per line instead (the JSONL form `condense` also reads).

The session: a system prompt with tool definitions, the user's task, then model
responses (one tool call, or several in parallel sharing an `llm_response_id`), each
answered by an observation, agent and user messages, and an
`LLMSummarizingCondenser(max_size=120, keep_first=4)` condensation whenever the view
grows past 120 events: it forgets the middle of the view (the previous summary with
it, never splitting a response's calls from their results) and puts its summary at
offset 4. Now and then a `CondensationRequest` comes first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.sessions import Generated, Manifest, Step, new_uuid

MAX_SIZE = 120
KEEP_FIRST = 4
TAIL = MAX_SIZE // 2 - KEEP_FIRST - 1  # events the condenser keeps at the end
MODEL = "litellm_proxy/anthropic/claude-sonnet-4-5-20250929"


@dataclass(slots=True)
class Entry:
    """An event of the view as the generator tracks it."""

    id: str
    starts: bool  # the first event of a model response or a message: a safe cut


def tool_schemas() -> list[dict[str, Any]]:
    """The tools of the system prompt, as the SDK lists them."""
    tools = (
        (
            "terminal",
            "Execute a bash command in the terminal within a persistent shell session.",
            ["command", "is_input", "timeout"],
        ),
        (
            "file_editor",
            "Custom editing tool for viewing, creating and editing files in plain-text format.",
            ["command", "path", "file_text", "old_str", "new_str", "insert_line", "view_range"],
        ),
        ("think", "Use the tool to think about something.", ["thought"]),
        ("browser_navigate", "Navigate to a URL in the browser.", ["url", "new_tab"]),
        ("finish", "Signals the completion of the current task.", ["message"]),
    )
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": "string", "description": f"The {k}."} for k in keys},
                    "required": keys[:1],
                },
            },
        }
        for name, description, keys in tools
    ]


class V1Session(Generated):
    """A long V1 conversation; `events()` yields its events, then `manifest` is set."""

    def __init__(self, count: int, seed: int = 7, compacts: bool = True) -> None:
        super().__init__(count, seed)
        self.compacts = compacts  # False: a conversation with no condenser
        self.conversation_id = new_uuid(self.rng)
        self.manifest = Manifest(0, 0, None, 0)

    def _base(self, kind: str, source: str) -> dict[str, Any]:
        return {
            "kind": kind,
            "id": new_uuid(self.rng),
            "timestamp": self.clock.iso(),
            "source": source,
        }

    def events(self) -> Iterator[dict[str, Any]]:
        t, r = self.texts, self.rng
        system = self._base("SystemPromptEvent", "agent")
        system["system_prompt"] = {"type": "text", "text": t.system_prompt()}
        system["tools"] = tool_schemas()
        task = self._message("user", t.task())
        view = [Entry(system["id"], True), Entry(task["id"], True)]
        yield system
        yield task
        written, condensations, summary = 2, 0, None
        command, output, code = t.terminal()
        first = [Step("run", t.prose(2), command=command, output=output, exit_code=code)]
        turn: list[Step] | None = first
        while written < self.count:
            left = self.count - written
            if self.compacts and len(view) > MAX_SIZE and left >= 2:
                if r.random() < 0.1:
                    yield self._base("CondensationRequest", "environment")
                    written += 1
                view, event = self._condense(view)
                summary = event["summary"]
                condensations += 1
                yield event
                written += 1
                continue
            steps = turn or self.agent.turn()
            turn = None
            if steps[0].kind in ("message", "user"):
                event = self._message(
                    "assistant" if steps[0].kind == "message" else "user", steps[0].content
                )
                view.append(Entry(event["id"], True))
                yield event
                written += 1
                continue
            if 2 * len(steps) > left:
                steps = steps[: left // 2]
                if not steps:
                    event = self._message("assistant", t.prose(2))
                    view.append(Entry(event["id"], True))
                    yield event
                    written += 1
                    continue
            response = f"chatcmpl-{new_uuid(r)}"
            actions = [self._action(step, response, i == 0) for i, step in enumerate(steps)]
            for i, action in enumerate(actions):
                view.append(Entry(action["id"], i == 0))
                yield action
            for step, action in zip(steps, actions, strict=True):
                observation = self._observation(step, action)
                view.append(Entry(observation["id"], False))
                yield observation
            written += 2 * len(steps)
        self.manifest = Manifest(written, len(view), summary, condensations)

    def _condense(self, view: list[Entry]) -> tuple[list[Entry], dict[str, Any]]:
        """The condenser's answer to a view that is too long, and the view after it."""
        cut = len(view) - TAIL
        while cut < len(view) and not view[cut].starts:
            cut += 1
        event = self._base("Condensation", "environment")
        event["forgotten_event_ids"] = [e.id for e in view[KEEP_FIRST:cut]]
        event["summary"] = self.texts.summary()
        event["summary_offset"] = KEEP_FIRST
        event["llm_response_id"] = f"chatcmpl-{new_uuid(self.rng)}"
        kept = [*view[:KEEP_FIRST], Entry(f"{event['id']}-summary", True), *view[cut:]]
        return kept, event

    def _message(self, role: str, text: str) -> dict[str, Any]:
        event = self._base("MessageEvent", "user" if role == "user" else "agent")
        event["llm_message"] = {
            "role": role,
            "content": [{"type": "text", "text": text}],
            "thinking_blocks": [],
        }
        if role == "user":
            event["activated_skills"] = []
            event["extended_content"] = []
        else:
            event["llm_response_id"] = f"chatcmpl-{new_uuid(self.rng)}"
        return event

    def _action(self, step: Step, response: str, first: bool) -> dict[str, Any]:
        event = self._base("ActionEvent", "agent")
        event["thought"] = (
            [{"type": "text", "text": step.thought}] if first and step.thought else []
        )
        event["thinking_blocks"] = []
        tool, action = _tool_action(step)
        arguments = {k: v for k, v in action.items() if k != "kind" and v is not None}
        arguments["security_risk"] = "LOW"
        call = f"toolu_{self.texts.base64ish(24)}"
        event["action"] = action
        event["tool_name"] = tool
        event["tool_call_id"] = call
        event["tool_call"] = {
            "id": call,
            "name": tool,
            "arguments": json.dumps(arguments),
            "origin": "completion",
        }
        event["llm_response_id"] = response
        event["security_risk"] = "LOW"
        return event

    def _observation(self, step: Step, action: dict[str, Any]) -> dict[str, Any]:
        event = self._base("ObservationEvent", "environment")
        event["tool_name"] = action["tool_name"]
        event["tool_call_id"] = action["tool_call_id"]
        event["observation"] = _observation(step)
        event["action_id"] = action["id"]
        return event


def _tool_action(step: Step) -> tuple[str, dict[str, Any]]:
    """The tool and the action of a step, as the SDK's tools name them."""
    if step.kind == "run":
        return "terminal", {
            "kind": "TerminalAction",
            "command": step.command,
            "is_input": False,
            "reset": False,
        }
    if step.kind == "read":
        return "file_editor", {
            "kind": "FileEditorAction",
            "command": "view",
            "path": step.path,
            "view_range": list(step.view_range or ()),
        }
    if step.kind == "edit":
        return "file_editor", {
            "kind": "FileEditorAction",
            "command": "str_replace",
            "path": step.path,
            "old_str": step.old,
            "new_str": step.new,
        }
    if step.kind == "create":
        return "file_editor", {
            "kind": "FileEditorAction",
            "command": "create",
            "path": step.path,
            "file_text": step.content,
        }
    if step.kind == "think":
        return "think", {"kind": "ThinkAction", "thought": step.thought}
    return "browser_navigate", {"kind": "BrowserNavigateAction", "url": step.url, "new_tab": False}


def _observation(step: Step) -> dict[str, Any]:
    content = [{"type": "text", "text": step.output}]
    if step.kind == "run":
        return {
            "kind": "TerminalObservation",
            "content": content,
            "is_error": False,
            "command": step.command,
            "exit_code": step.exit_code,
            "timeout": False,
            "metadata": {
                "exit_code": step.exit_code,
                "pid": -1,
                "username": "openhands",
                "working_dir": "/workspace/project",
                "prefix": "",
                "suffix": f"\n[The command completed with exit code {step.exit_code}.]",
            },
        }
    if step.kind in ("read", "edit", "create"):
        command = {"read": "view", "edit": "str_replace", "create": "create"}[step.kind]
        return {
            "kind": "FileEditorObservation",
            "content": content,
            "is_error": False,
            "command": command,
            "path": step.path,
            "prev_exist": step.kind != "create",
        }
    if step.kind == "think":
        return {"kind": "ThinkObservation", "content": content, "is_error": False}
    return {"kind": "BrowserObservation", "content": content, "is_error": False}


def base_state(session: V1Session) -> dict[str, Any]:
    """The conversation's `base_state.json`: agent, LLM (key masked), condenser."""
    llm = {
        "model": MODEL,
        "api_key": "**********",
        "base_url": "https://llm-proxy.example.dev",
        "num_retries": 5,
        "temperature": 0.0,
        "max_input_tokens": 200000,
        "max_output_tokens": 64000,
        "caching_prompt": True,
        "usage_id": "agent",
    }
    return {
        "id": session.conversation_id,
        "agent": {
            "kind": "Agent",
            "llm": llm,
            "tools": [{"name": n} for n in ("terminal", "file_editor", "think")],
            "condenser": {
                "kind": "LLMSummarizingCondenser",
                "llm": {**llm, "usage_id": "condenser"},
                "max_size": MAX_SIZE,
                "keep_first": KEEP_FIRST,
            },
        },
        "workspace": {"kind": "LocalWorkspace", "working_dir": "/workspace/project"},
        "persistence_dir": f"/root/.openhands/conversations/{session.conversation_id}",
        "max_iterations": 500,
        "stuck_detection": True,
        "execution_status": "finished",
        "confirmation_policy": {"kind": "NeverConfirm"},
        "activated_knowledge_skills": [],
        "stats": {"usage_to_metrics": {}},
        "secret_registry": {"secret_sources": {}},
    }


def write_folder(path: Path, count: int, seed: int = 7, compacts: bool = True) -> Manifest:
    """Write a conversation folder of `count` event files at `path` (never condensed
    unless `compacts`)."""
    session = V1Session(count, seed, compacts)
    events_dir = path / "events"
    events_dir.mkdir(parents=True, exist_ok=True)
    for index, event in enumerate(session.events()):
        name = f"event-{index:05d}-{event['id']}.json"
        (events_dir / name).write_text(json.dumps(event), encoding="ascii")
    (events_dir / ".eventlog.lock").touch()
    (path / "base_state.json").write_text(json.dumps(base_state(session)), encoding="ascii")
    return session.manifest


def write_jsonl(path: Path, count: int, seed: int = 7) -> Manifest:
    """Write the same conversation as one V1 event per line."""
    session = V1Session(count, seed)
    with path.open("w", encoding="ascii", buffering=1 << 20) as file:
        for event in session.events():
            file.write(json.dumps(event))
            file.write("\n")
    return session.manifest
