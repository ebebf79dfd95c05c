"""Generate Codex CLI rollouts for the benchmark.

A rollout as Codex writes it (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`: one
compact `{"timestamp", "type", "payload"}` object per line, UTF-8 as is):
`session_meta` with the base instructions, the developer and environment-context
messages, `turn_context` per turn, and for every step the model's `response_item`s
(encrypted `reasoning`, `function_call` to `exec_command`, `custom_tool_call` to
`apply_patch`, assistant messages) with their outputs, plus the `event_msg` lines
the client records beside them (`exec_command_end`, `patch_apply_end`,
`token_count`, `agent_message`, `user_message`, `task_started`/`task_complete`).

Whenever the context fills up (every 300-600 history items) Codex compacts: a
`compacted` line whose `replacement_history` keeps the initial context, the recent
user messages and the summary (a user message of Codex's `compaction.summary` kind),
or, every third time, an encrypted remote `compaction` item; then the
`context_compacted` event.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.sessions import Generated, Manifest, Step, new_uuid, write_lines
from bench.textpool import Texts

MODEL = "gpt-5.5"
SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary "
SUMMARY_PREFIX += "of its thinking process. Use it to build on the work already done:\n"


def _message(role: str, text: str, **extra: Any) -> dict[str, Any]:
    kind = "output_text" if role == "assistant" else "input_text"
    return {"type": "message", "role": role, "content": [{"type": kind, "text": text}], **extra}


class CodexSession(Generated):
    """A long Codex rollout; `lines()` yields its lines, then `manifest` is set."""

    def __init__(self, count: int, seed: int = 7, compacts: bool = True) -> None:
        super().__init__(count, seed)
        self.compacts = compacts  # False: a session that never filled its window
        self.thread = new_uuid(self.rng)
        self.cwd = f"/Users/dev/{self.rng.choice(self.texts.repos)}"
        self.turn_id = new_uuid(self.rng)
        self.tokens = 20_000
        self.compactions = 0
        self.manifest = Manifest(0, 0, None, 0)

    def _line(self, type_: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": self.clock.iso_z(), "type": type_, "payload": payload}

    def _item(self, payload: dict[str, Any]) -> dict[str, Any]:
        meta = {"turn_id": self.turn_id}
        return self._line(
            "response_item", {**payload, "internal_chat_message_metadata_passthrough": meta}
        )

    def lines(self) -> Iterator[dict[str, Any]]:
        t, r = self.texts, self.rng
        developer = _message(
            "developer",
            f"<permissions instructions>\n{t.system_prompt(3000)}\n</permissions instructions>",
        )
        context = _message(
            "user",
            f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>"
            "zsh</shell>\n  <current_date>2026-03-02</current_date>\n  <timezone>"
            "Europe/Paris</timezone>\n</environment_context>",
        )
        task = t.task()
        head = [
            self._line(
                "session_meta",
                {
                    "id": self.thread,
                    "timestamp": self.clock.iso_z(),
                    "cwd": self.cwd,
                    "originator": "codex_cli_rs",
                    "cli_version": "0.144.1",
                    "source": "cli",
                    "model_provider": "openai",
                    "base_instructions": {"text": t.system_prompt(12_000)},
                    "git": {"commit_hash": f"{r.getrandbits(160):040x}", "branch": "main"},
                },
            ),
            self._line(
                "event_msg",
                {"type": "task_started", "turn_id": self.turn_id, "model_context_window": 272_000},
            ),
            self._item(developer),
            self._item(context),
            self._turn_context(),
            self._line("event_msg", {"type": "user_message", "message": task, "images": []}),
            self._item(_message("user", task)),
        ]
        yield from head
        history = 3  # items the model sees now: developer, context, task
        users = [_message("user", task)]
        written, condensations = len(head), 0
        summary: str | None = None
        next_compaction: float = r.randint(300, 600)
        if not self.compacts:
            next_compaction = float("inf")
        while written < self.count:
            left = self.count - written
            if history >= next_compaction and left >= 2:
                block, history, summary = self._compaction(developer, context, users)
                yield from block
                written += len(block)
                condensations += 1
                next_compaction = history + r.randint(300, 600)
                continue
            steps = self.agent.turn()
            if steps[0].kind == "user":
                users.append(_message("user", steps[0].content))
            block, sent = self._turn(steps)
            if len(block) > left:
                block, sent = [self._item(_message("assistant", t.prose(2)))], 1
            yield from block
            written += len(block)
            history += sent
        self.manifest = Manifest(written, history, summary, condensations)

    def _turn_context(self) -> dict[str, Any]:
        return self._line(
            "turn_context",
            {
                "turn_id": self.turn_id,
                "cwd": self.cwd,
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "network_access": False},
                "model": MODEL,
                "effort": "medium",
                "summary": "auto",
            },
        )

    def _tokens(self) -> dict[str, Any]:
        self.tokens += self.rng.randint(200, 6000)
        usage = {
            "input_tokens": self.tokens,
            "cached_input_tokens": self.tokens - 2000,
            "output_tokens": self.rng.randint(50, 2000),
            "reasoning_output_tokens": 64,
            "total_tokens": self.tokens + 500,
        }
        # the last request's context stays under Codex's auto-compact limit (90% of
        # the full window, 244,800 for the 258,400 it reports), as in a real rollout
        context = 20_000 + self.tokens % 180_000
        last = usage | {"input_tokens": context, "cached_input_tokens": context - 2000}
        last["total_tokens"] = context + 500
        return self._line(
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage,
                    "last_token_usage": last,
                    "model_context_window": 258_400,
                },
            },
        )

    def _turn(self, steps: list[Step]) -> tuple[list[dict[str, Any]], int]:
        """The lines of one step (or parallel calls): (lines, items the model sees)."""
        t, r = self.texts, self.rng
        step = steps[0]
        if step.kind == "user":
            done = self._line(
                "event_msg",
                {"type": "task_complete", "turn_id": self.turn_id, "last_agent_message": None},
            )
            self.turn_id = new_uuid(r)
            return [
                done,
                self._line(
                    "event_msg",
                    {
                        "type": "task_started",
                        "turn_id": self.turn_id,
                        "model_context_window": 272_000,
                    },
                ),
                self._turn_context(),
                self._line(
                    "event_msg", {"type": "user_message", "message": step.content, "images": []}
                ),
                self._item(_message("user", step.content)),
            ], 1
        if step.kind == "message":
            return [
                self._line(
                    "event_msg",
                    {"type": "agent_message", "message": step.content, "phase": "final_answer"},
                ),
                self._item(
                    _message(
                        "assistant", step.content, id=f"msg_{t.base64ish(40)}", phase="final_answer"
                    )
                ),
            ], 1
        lines: list[dict[str, Any]] = []
        if step.thought or r.random() < 0.6:
            summary = [{"type": "summary_text", "text": step.thought}] if step.thought else []
            lines.append(
                self._item(
                    {
                        "type": "reasoning",
                        "id": f"rs_{t.base64ish(40)}",
                        "summary": summary,
                        "encrypted_content": t.base64ish(r.randint(600, 4000)),
                    }
                )
            )
        if step.kind == "think":
            lines.append(self._tokens())
            return lines, 1
        calls = [(tool_step, f"call_{t.base64ish(24)}") for tool_step in steps]
        for tool_step, call in calls:
            lines.append(self._item(_call(tool_step, call, self.cwd, t)))
        for tool_step, call in calls:
            output, event = _output(tool_step, call, self.turn_id, self.cwd, t)
            lines.append(self._item(output))
            lines.append(self._line("event_msg", event))
        lines.append(self._tokens())
        sent = (1 if lines[0]["payload"]["type"] == "reasoning" else 0) + 2 * len(calls)
        return lines, sent

    def _compaction(
        self, developer: dict[str, Any], context: dict[str, Any], users: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], int, str]:
        """A compaction: its two lines, the history size after it, the summary shown."""
        t, r = self.texts, self.rng
        recent = users[-5:]
        if self.compactions % 3 == 2:  # a remote compaction: the summary is encrypted
            encrypted = t.base64ish(r.randint(3000, 9000))
            history = [
                *recent,
                developer,
                context,
                {
                    "type": "compaction",
                    "id": f"cmp_{t.base64ish(30)}",
                    "encrypted_content": encrypted,
                },
            ]
            message, shown = "", f"(encrypted summary, {len(encrypted):,} chars)"
        else:
            message = t.summary()
            kinds = {"content_item_kinds": ["compaction.summary"]}
            summary = _message(
                "user", SUMMARY_PREFIX + message, internal_chat_message_metadata_passthrough=kinds
            )
            history = [developer, context, *recent, summary]
            shown = SUMMARY_PREFIX + message
        lines = [
            self._line("compacted", {"message": message, "replacement_history": history}),
            self._line("event_msg", {"type": "context_compacted"}),
        ]
        self.compactions += 1
        return lines, len(history), shown


def _call(step: Step, call: str, cwd: str, texts: Texts) -> dict[str, Any]:
    if step.kind in ("edit", "create"):
        if step.kind == "edit":
            body = "\n".join(
                [*("-" + x for x in step.old.split("\n")), *("+" + x for x in step.new.split("\n"))]
            )
            patch = f"*** Begin Patch\n*** Update File: {step.path}\n@@\n{body}\n*** End Patch"
        else:
            body = "\n".join("+" + x for x in step.content.split("\n"))
            patch = f"*** Begin Patch\n*** Add File: {step.path}\n{body}\n*** End Patch"
        return {
            "type": "custom_tool_call",
            "id": f"ctc_{texts.base64ish(40)}",
            "status": "completed",
            "call_id": call,
            "name": "apply_patch",
            "input": patch,
        }
    return {
        "type": "function_call",
        "id": f"fc_{texts.base64ish(40)}",
        "name": "exec_command",
        "arguments": json.dumps(
            {
                "cmd": _command(step),
                "workdir": cwd,
                "yield_time_ms": 10000,
                "max_output_tokens": 10000,
            }
        ),
        "call_id": call,
    }


def _command(step: Step) -> str:
    if step.kind == "read":
        first, last = step.view_range or (1, 200)
        return f"nl -ba {step.path} | sed -n '{first},{last}p'"
    if step.kind == "browse":
        return f"curl -sL '{step.url}' | html2text | head -400"
    return step.command


def _output(
    step: Step, call: str, turn: str, cwd: str, texts: Texts
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The output item of a call, and the event the client records beside it."""
    r = texts.rng
    if step.kind in ("edit", "create"):
        letter = "M" if step.kind == "edit" else "A"
        done = f"Success. Updated the following files:\n{letter} {step.path}\n"
        item = {
            "type": "custom_tool_call_output",
            "call_id": call,
            "output": f"Exit code: 0\nWall time: 0 seconds\nOutput:\n{done}",
        }
        change = (
            {"type": "update", "unified_diff": step.old + "\n" + step.new, "move_path": None}
            if step.kind == "edit"
            else {"type": "add", "content": step.content}
        )
        event = {
            "type": "patch_apply_end",
            "call_id": call,
            "turn_id": turn,
            "stdout": done,
            "stderr": "",
            "success": True,
            "changes": {step.path: change},
            "status": "completed",
        }
        return item, event
    text = step.output if step.kind != "read" else step.output.split("\n", 1)[-1]
    wall = r.uniform(0.01, 40)
    head = (
        f"Chunk ID: {r.getrandbits(24):06x}\nWall time: {wall:.4f} seconds\nProcess exited "
        f"with code {step.exit_code}\nOriginal token count: {len(text) // 4}\nOutput:\n"
    )
    item = {"type": "function_call_output", "call_id": call, "output": head + text}
    event = {
        "type": "exec_command_end",
        "call_id": call,
        "turn_id": turn,
        "command": ["/bin/zsh", "-lc", _command(step)],
        "cwd": cwd,
        "source": "agent",
        "stdout": "",
        "stderr": "",
        "aggregated_output": text,
        "exit_code": step.exit_code,
        "duration": {"secs": int(wall), "nanos": r.randint(0, 999_999_999)},
        "status": "completed",
    }
    return item, event


def write_rollout(path: Path, count: int, seed: int = 7, compacts: bool = True) -> Manifest:
    """Write a Codex rollout of `count` lines to `path` (never compacted unless
    `compacts`)."""
    session = CodexSession(count, seed, compacts)
    write_lines(path, session.lines())
    return session.manifest
