"""Generate OpenHands V0 session logs for the benchmark, of two kinds.

A session: a system prompt, a user message and its recall, then command/output
pairs, file reads and edits, thoughts, large browse observations, and a rolling
LLM-style condensation about every 100 events (range + summary at offset 2).

- `uniform`: every text is cut from one word salad of 26 words. This is the
  generator the earlier figures were measured on, kept byte for byte so that they
  stay comparable; its text is unrealistically easy (UTF-8 checks are free and a
  tokenizer runs about 4x faster on it than on real text).
- `realistic`: the same kind of session with real-looking events (the keys
  OpenHands writes, `tool_call_metadata` with the model's response) and real-looking
  text from `bench.textpool`: thousands of distinct words and identifiers, code,
  test and compiler output with ANSI colours, diffs, paths, JSON escapes, a few
  percent of non-ASCII bytes, and 10-30 KB browse pages.

    python bench/generate.py OUT.jsonl 100000 [--kind realistic] [--seed 7]
"""

from __future__ import annotations

import random
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.sessions import Generated, Manifest, Step, new_uuid, write_lines

WORDS = [
    "the",
    "agent",
    "runs",
    "tests",
    "edits",
    "files",
    "reads",
    "logs",
    "build",
    "passes",
    "fails",
    "error",
    "module",
    "function",
    "class",
    "return",
    "value",
    "import",
    "path",
    "config",
    "request",
    "response",
    "cache",
    "index",
    "query",
    "update",
]


_CORPUS = " ".join(random.Random(1).choice(WORDS) for _ in range(60_000))


def _text(rng: random.Random, chars: int) -> str:
    """`chars` characters of word salad, cut from a pre-built text."""
    start = rng.randrange(0, len(_CORPUS) - chars - 1)
    return _CORPUS[start : start + chars]


def events(count: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """Yield `count` events (dicts) of a long session, every text cut from `_CORPUS`."""
    rng = random.Random(seed)
    stamp = "2026-11-01T12:00:00.000000"
    yield {
        "id": 0,
        "timestamp": stamp,
        "source": "agent",
        "message": "system",
        "action": "system",
        "args": {"content": _text(rng, 4000), "tools": [], "agent_class": "CodeActAgent"},
    }
    task = "Fix the failing tests in the parser module and keep the public API unchanged."
    yield {
        "id": 1,
        "timestamp": stamp,
        "source": "user",
        "message": task,
        "action": "message",
        "args": {"content": task, "image_urls": None, "wait_for_response": False},
    }
    yield {
        "id": 2,
        "timestamp": stamp,
        "source": "user",
        "message": "recall",
        "action": "recall",
        "args": {"recall_type": "workspace_context", "query": task, "thought": ""},
    }
    yield {
        "id": 3,
        "timestamp": stamp,
        "source": "environment",
        "message": "",
        "observation": "recall",
        "content": "Added workspace context",
        "extras": {"recall_type": "workspace_context"},
        "cause": 2,
    }
    next_id = 4
    last_condensed_at = 3
    forgotten_to = 1  # keep_first = 2: the system prompt and the user message stay
    while next_id < count:
        if next_id - last_condensed_at >= 100 and next_id + 1 < count:
            end = next_id - 50 if (next_id - 50) % 2 == 1 else next_id - 49  # pairs stay whole
            yield {
                "id": next_id,
                "timestamp": stamp,
                "source": "agent",
                "message": "Summary",
                "action": "condensation",
                "args": {
                    "forgotten_event_ids": None,
                    "forgotten_events_start_id": forgotten_to + 1,
                    "forgotten_events_end_id": end,
                    "summary": _text(rng, 1500),
                    "summary_offset": 2,
                },
            }
            forgotten_to = end
            last_condensed_at = next_id
            next_id += 1
            continue
        kind = rng.choices(["run", "read", "edit", "think", "browse"], [40, 25, 20, 10, 5])[0]
        call = f"toolu_{next_id:08d}"
        meta = {"function_name": kind, "tool_call_id": call}
        thought = _text(rng, rng.randint(0, 300))
        if kind == "run":
            action_args = {
                "command": f"python -m pytest tests/test_{next_id % 97}.py -q",
                "thought": thought,
            }
            content, extras = (
                _text(rng, rng.randint(200, 3000)),
                {"command": "pytest", "metadata": {"exit_code": rng.choice([0, 1])}},
            )
        elif kind == "read":
            action_args = {"path": f"/workspace/src/mod_{next_id % 50}.py", "thought": thought}
            content, extras = _text(rng, rng.randint(500, 6000)), {"path": "/workspace/src/x.py"}
        elif kind == "edit":
            action_args = {
                "path": f"/workspace/src/mod_{next_id % 50}.py",
                "command": "str_replace",
                "old_str": _text(rng, 120),
                "new_str": _text(rng, 140),
                "thought": thought,
            }
            content, extras = _text(rng, rng.randint(300, 1500)), {"path": "/workspace/src/x.py"}
        elif kind == "think":
            action_args = {"thought": _text(rng, 600)}
            content, extras = "Your thought has been logged.", {}
        else:
            action_args = {"url": f"https://docs.example.org/page/{next_id}", "thought": thought}
            content, extras = (
                _text(rng, rng.randint(10_000, 30_000)),
                {"url": f"https://docs.example.org/page/{next_id}"},
            )
        yield {
            "id": next_id,
            "timestamp": stamp,
            "source": "agent",
            "message": kind,
            "action": kind,
            "args": action_args,
            "tool_call_metadata": meta,
        }
        if next_id + 1 < count:
            yield {
                "id": next_id + 1,
                "timestamp": stamp,
                "source": "agent",
                "message": kind[:20],
                "observation": kind,
                "content": content,
                "extras": extras,
                "cause": next_id,
                "tool_call_metadata": meta,
            }
        next_id += 2


KEEP_FIRST = 2  # the system prompt and the first user message stay in every view
CONDENSE_EVERY = 100  # events between two condensations
MODEL = "anthropic/claude-sonnet-4-20250514"

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": "string", "description": f"The {key} of the call."}
                    for key in keys
                },
                "required": keys[:1],
            },
        },
    }
    for name, description, keys in (
        ("execute_bash", "Execute a bash command in the terminal.", ["command", "is_input"]),
        (
            "str_replace_editor",
            "Custom editing tool for viewing, creating and editing files.",
            ["command", "path", "old_str", "new_str", "file_text", "view_range"],
        ),
        ("think", "Use the tool to think about something.", ["thought"]),
        ("browser", "Interact with the browser.", ["code"]),
        ("finish", "Finish the interaction when the task is complete.", ["message"]),
    )
]


class RealisticV0(Generated):
    """A long OpenHands V0 session with real-looking events and text."""

    def __init__(self, count: int, seed: int = 7) -> None:
        super().__init__(count, seed)
        self.manifest = Manifest(0, 0, None, 0)
        self.host = f"runtime-{new_uuid(self.rng)[:8]}"

    def events(self) -> Iterator[dict[str, Any]]:
        """Yield the session's events, then fill in `manifest`."""
        t, r = self.texts, self.rng
        prompt = t.system_prompt()
        task = t.task()
        yield self._event(
            0,
            "agent",
            prompt,
            action="system",
            args={
                "content": prompt,
                "tools": TOOLS,
                "openhands_version": "0.39.1",
                "agent_class": "CodeActAgent",
            },
        )
        yield self._event(
            1,
            "user",
            task,
            action="message",
            args={"content": task, "file_urls": [], "image_urls": [], "wait_for_response": False},
        )
        yield self._event(
            2,
            "user",
            f"Retrieving content for: {task[:50]}",
            action="recall",
            args={"recall_type": "workspace_context", "query": task, "thought": ""},
        )
        yield self._event(
            3,
            "environment",
            "Added workspace context",
            observation="recall",
            cause=2,
            content="Added workspace context",
            extras={
                "recall_type": "workspace_context",
                "repo_name": "",
                "repo_directory": "",
                "repo_instructions": "",
                "runtime_hosts": {"http://localhost:50995": 50995},
                "additional_agent_instructions": "",
                "date": "2026-03-02",
                "microagent_knowledge": [],
            },
        )
        visible = 4  # events the agent sees (not condensations), ids 0..next_id-1
        cuts: deque[tuple[int, int]] = deque(maxlen=400)  # (last id of a step, visible so far)
        cuts.append((3, visible))
        next_id, last_condensed_at = 4, 3
        forgotten_to, forgotten_visible = KEEP_FIRST - 1, KEEP_FIRST
        summary: str | None = None
        condensations = 0
        while next_id < self.count:
            if next_id - last_condensed_at >= CONDENSE_EVERY and next_id + 1 < self.count:
                end, through = max(c for c in cuts if c[0] <= next_id - CONDENSE_EVERY // 2)
                if r.random() < 0.1:  # the agent asked for it first (context window full)
                    yield self._event(
                        next_id,
                        "agent",
                        "Requesting a condensation of the conversation history.",
                        action="condensation_request",
                        args={},
                    )
                    next_id += 1
                summary = t.summary()
                yield self._event(
                    next_id,
                    "agent",
                    "Summary",
                    action="condensation",
                    args={
                        "forgotten_event_ids": None,
                        "forgotten_events_start_id": forgotten_to + 1,
                        "forgotten_events_end_id": end,
                        "summary": summary,
                        "summary_offset": KEEP_FIRST,
                    },
                )
                forgotten_to, forgotten_visible = end, through
                last_condensed_at = next_id
                condensations += 1
                next_id += 1
                continue
            step = self.agent.step()
            if next_id + 1 >= self.count and step.kind not in ("message", "user"):
                step = Step("message", "", content=t.prose(2))
            for event in self._step(step, next_id):
                yield event
                next_id += 1
                visible += 1
            cuts.append((next_id - 1, visible))
        kept = visible - (forgotten_visible - KEEP_FIRST)
        self.manifest = Manifest(next_id, kept + (summary is not None), summary, condensations)

    def _event(self, id_: int, source: str, message: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": id_,
            "timestamp": self.clock.iso(),
            "source": source,
            "message": message,
            **fields,
        }

    def _step(self, step: Step, id_: int) -> list[dict[str, Any]]:
        """The events of one step: an action and, for a tool, its observation."""
        kind = step.kind
        if kind in ("message", "user"):
            source = "agent" if kind == "message" else "user"
            return [
                self._event(
                    id_,
                    source,
                    step.content,
                    action="message",
                    args={
                        "content": step.content,
                        "file_urls": [],
                        "image_urls": [],
                        "wait_for_response": kind == "message",
                    },
                )
            ]
        if kind == "run":
            action, function = "run", "execute_bash"
            arguments = {"command": step.command, "is_input": "false", "security_risk": "LOW"}
            args = {
                "command": step.command,
                "is_input": False,
                "thought": step.thought,
                "blocking": False,
                "is_static": False,
                "cwd": None,
                "hidden": False,
                "confirmation_state": "confirmed",
                "security_risk": -1,
            }
            message = f"Running command: {step.command}"
            result = f"Command `{step.command}` executed with exit code {step.exit_code}."
            extras = {
                "command": step.command,
                "metadata": {
                    "exit_code": step.exit_code,
                    "pid": -1,
                    "username": "openhands",
                    "hostname": self.host,
                    "working_dir": "/workspace",
                    "py_interpreter_path": "/openhands/poetry/bin/python",
                    "prefix": "",
                    "suffix": f"\n[The command completed with exit code {step.exit_code}.]",
                },
                "hidden": False,
            }
        elif kind == "read":
            action, function = "read", "str_replace_editor"
            arguments = {
                "command": "view",
                "path": step.path,
                "view_range": list(step.view_range or (1, -1)),
            }
            args = {
                "path": step.path,
                "start": 0,
                "end": -1,
                "thought": step.thought,
                "security_risk": -1,
                "impl_source": "oh_aci",
                "view_range": list(step.view_range or (1, -1)),
            }
            message, result = f"Reading file: {step.path}", f"I read the file {step.path}."
            extras = {"path": step.path, "impl_source": "oh_aci"}
        elif kind in ("edit", "create"):
            action, function = "edit", "str_replace_editor"
            command = "str_replace" if kind == "edit" else "create"
            arguments = (
                {"command": command, "path": step.path, "old_str": step.old, "new_str": step.new}
                if kind == "edit"
                else {"command": command, "path": step.path, "file_text": step.content}
            )
            args = {
                "path": step.path,
                "command": command,
                "file_text": step.content or None,
                "old_str": step.old or None,
                "new_str": step.new or None,
                "insert_line": None,
                "content": "",
                "start": 1,
                "end": -1,
                "thought": step.thought,
                "security_risk": -1,
                "impl_source": "oh_aci",
            }
            message, result = "", f"I edited the file {step.path}."
            diff = "\n".join(
                [
                    f"--- {step.path}",
                    f"+++ {step.path}",
                    "@@ -1 +1 @@",
                    *("-" + x for x in step.old.splitlines()),
                    *("+" + x for x in step.new.splitlines()),
                ]
            )
            extras = {
                "path": step.path,
                "prev_exist": kind == "edit",
                "old_content": None,
                "new_content": None,
                "impl_source": "oh_aci",
                "diff": diff,
            }
        elif kind == "think":
            action, function = "think", "think"
            arguments = {"thought": step.thought}
            args = {"thought": step.thought}
            message, result, extras = f"I am thinking...: {step.thought}", step.output, {}
        else:  # browse
            action, function = "browse", "browser"
            arguments = {"code": f"goto('{step.url}')"}
            args = {
                "url": step.url,
                "thought": step.thought,
                "return_axtree": False,
                "security_risk": -1,
            }
            message, result = f"Browsing URL: {step.url}", f"Visited {step.url}"
            extras = {
                "url": step.url,
                "trigger_by_action": "browse",
                "screenshot": "",
                "error": False,
                "open_pages_urls": [step.url],
                "active_page_index": 0,
                "last_browser_action": "",
                "focused_element_bid": "",
            }
        call = f"toolu_{self.texts.base64ish(24)}"
        meta = {
            "function_name": function,
            "tool_call_id": call,
            "model_response": self._response(step.thought, function, arguments, call),
            "total_calls_in_response": 1,
        }
        observed = {"content": step.output, "extras": extras}
        if kind == "run":
            observed["success"] = step.exit_code == 0
        return [
            self._event(id_, "agent", message, action=action, tool_call_metadata=meta, args=args),
            self._event(
                id_ + 1,
                "agent",
                result,
                cause=id_,
                observation=action,
                tool_call_metadata=meta,
                **observed,
            ),
        ]

    def _response(
        self, thought: str, function: str, arguments: dict[str, Any], call: str
    ) -> dict[str, Any]:
        """The model response that asked for a tool call, as litellm returns it."""
        r = self.rng
        prompt = r.randint(8_000, 120_000)
        completion = r.randint(40, 1_500)
        return {
            "id": f"chatcmpl-{new_uuid(r)}",
            "created": int(self.clock.now),
            "model": MODEL,
            "object": "chat.completion",
            "system_fingerprint": None,
            "choices": [
                {
                    "finish_reason": "tool_calls",
                    "index": 0,
                    "message": {
                        "content": thought,
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 1,
                                "function": {
                                    "arguments": orjson.dumps(arguments).decode(),
                                    "name": function,
                                },
                                "id": call,
                                "type": "function",
                            }
                        ],
                        "function_call": None,
                    },
                }
            ],
            "usage": {
                "completion_tokens": completion,
                "prompt_tokens": prompt,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": prompt - r.randint(0, 4000)},
                "cache_creation_input_tokens": r.randint(0, 4000),
                "cache_read_input_tokens": prompt - r.randint(0, 4000),
            },
            "service_tier": None,
        }


KINDS = ("uniform", "realistic")


def write_log(path: Path, count: int, kind: str = "uniform", seed: int = 7) -> Manifest | None:
    """Write a V0 log of `count` events of `kind` to `path` (one buffered pass); the
    realistic kind returns its manifest."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    session = RealisticV0(count, seed) if kind == "realistic" else None
    stream = session.events() if session is not None else events(count, seed)
    write_lines(path, stream)
    return session.manifest if session is not None else None


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("count", type=int)
    parser.add_argument("--kind", choices=KINDS, default="uniform")
    parser.add_argument("--seed", type=int, default=7)
    options = parser.parse_args()
    write_log(options.out, options.count, options.kind, options.seed)
