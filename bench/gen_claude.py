"""Generate Claude Code session files for the benchmark.

A session as Claude Code 2.1 writes it (`~/.claude/projects/<project>/<session>.jsonl`,
compact JSON, UTF-8 as is): a tree of `user`/`assistant`/`system`/`attachment` lines
linked by `parentUuid`, one assistant line per content block (thinking, text,
tool_use; the blocks of one response share `message.id`), tool results as user
lines with the client's `toolUseResult` copy, `turn_duration` system lines, and the
lines without a uuid the client interleaves (`queue-operation`, `last-prompt`,
`file-history-snapshot`). Whenever the context fills up (every 250-450 messages) an
auto-compaction writes a `compact_boundary` (parent null, `logicalParentUuid` the
last line), the `isCompactSummary` user line and a few `compact_file_reference`
attachments; the chain goes on from there.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.sessions import Generated, Manifest, Step, new_uuid, write_lines
from bench.textpool import Texts

MODEL = "claude-opus-4-7"
VERSION = "2.1.112"
SUMMARY_HEAD = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
)
TOOLS = ["AskUserQuestion", "CronCreate", "EnterPlanMode", "ExitPlanMode", "NotebookEdit"]
TOOLS += ["TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "WebFetch", "WebSearch"]


class ClaudeSession(Generated):
    """A long Claude Code session; `lines()` yields its lines, then `manifest` is set."""

    def __init__(self, count: int, seed: int = 7, compacts: bool = True) -> None:
        super().__init__(count, seed)
        self.compacts = compacts  # False: a session that never filled its window
        self.answered: tuple[str, dict[str, Any]] = ("", {})  # the last answer's usage
        self.session_id = new_uuid(self.rng)
        self.cwd = f"/home/dev/{self.rng.choice(self.texts.repos)}"
        self.base = {
            "userType": "external",
            "entrypoint": "cli",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": VERSION,
            "gitBranch": "main",
        }
        self.parent: str | None = None
        self.prompt_id = new_uuid(self.rng)
        self.manifest = Manifest(0, 0, None, 0)

    # --- lines -------------------------------------------------------------------------

    def _tree(self, type_: str, **fields: Any) -> dict[str, Any]:
        """A line of the tree, chained to the previous one."""
        uuid = new_uuid(self.rng)
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            **fields,
            "type": type_,
            "uuid": uuid,
            "timestamp": self.clock.iso_z(),
            **self.base,
        }
        self.parent = uuid
        return line

    def _user(self, content: Any, **fields: Any) -> dict[str, Any]:
        return self._tree(
            "user", promptId=self.prompt_id, message={"role": "user", "content": content}, **fields
        )

    def _assistant(
        self, block: dict[str, Any], message_id: str, request: str, stop: str | None
    ) -> dict[str, Any]:
        r = self.rng
        if self.answered[0] != message_id:  # the client writes an answer's whole usage
            usage = {  # on each of its lines, as the one of its first
                "input_tokens": r.randint(1, 12),
                "cache_creation_input_tokens": r.randint(0, 9000),
                "cache_read_input_tokens": r.randint(10_000, 160_000),
                "output_tokens": r.randint(20, 2000),
                "service_tier": "standard",
            }
            self.answered = (message_id, usage)
        usage = dict(self.answered[1])
        message = {
            "model": MODEL,
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return self._tree("assistant", message=message, requestId=request)

    def lines(self) -> Iterator[dict[str, Any]]:
        t, r = self.texts, self.rng
        task = t.task()
        yield {"type": "permission-mode", "permissionMode": "default", "sessionId": self.session_id}
        first = self._user(task, permissionMode="default")
        yield {
            "type": "file-history-snapshot",
            "messageId": first["uuid"],
            "snapshot": {
                "messageId": first["uuid"],
                "trackedFileBackups": {},
                "timestamp": first["timestamp"],
            },
            "isSnapshotUpdate": False,
        }
        yield first
        yield self._tree(
            "attachment",
            attachment={"type": "deferred_tools_delta", "addedNames": TOOLS, "removedNames": []},
        )
        written, messages, condensations = 4, 1, 0
        summary: str | None = None
        next_compaction = r.randint(250, 450)
        while written < self.count:
            left = self.count - written
            if self.compacts and messages >= next_compaction and left >= 6:
                block = list(self._compaction())
                summary = block[1]["message"]["content"]
                yield from block
                written += len(block)
                messages, condensations = 1, condensations + 1
                next_compaction = r.randint(250, 450)
                continue
            parent = self.parent
            block, sent = self._turn(self.agent.turn())
            if len(block) > left:  # the file ends: a last answer instead
                self.parent = parent
                text = {"type": "text", "text": t.prose(2)}
                block = [self._assistant(text, self._message_id(), self._request_id(), "end_turn")]
                sent = 1
            yield from block
            written += len(block)
            messages += sent
        self.manifest = Manifest(written, messages, summary, condensations)

    def _message_id(self) -> str:
        return f"msg_01{self.texts.base64ish(22)}"

    def _request_id(self) -> str:
        return f"req_011C{self.texts.base64ish(20)}"

    def _turn(self, steps: list[Step]) -> tuple[list[dict[str, Any]], int]:
        """The lines of one model response (and its results): (lines, messages)."""
        t, r = self.texts, self.rng
        step = steps[0]
        if step.kind == "user":
            self.prompt_id = new_uuid(r)
            lines = []
            if r.random() < 0.3:
                lines.append(
                    {
                        "type": "queue-operation",
                        "operation": "enqueue",
                        "timestamp": self.clock.iso_z(),
                        "sessionId": self.session_id,
                        "content": step.content,
                    }
                )
            lines.append(self._user(step.content, permissionMode="default"))
            lines.append(
                {
                    "type": "last-prompt",
                    "lastPrompt": step.content[:200],
                    "sessionId": self.session_id,
                }
            )
            return lines, 1
        message_id, request = self._message_id(), self._request_id()
        lines: list[dict[str, Any]] = []
        if step.kind == "message":
            lines.append(
                self._assistant(
                    {"type": "text", "text": step.content}, message_id, request, "end_turn"
                )
            )
            lines.append(
                self._tree(
                    "system",
                    subtype="turn_duration",
                    durationMs=r.randint(2_000, 400_000),
                    messageCount=r.randint(2, 60),
                    isMeta=False,
                )
            )
            return lines, 1
        if step.kind == "think" or r.random() < 0.5:
            thinking = step.thought if step.kind == "think" or r.random() < 0.3 else ""
            lines.append(
                self._assistant(
                    {
                        "type": "thinking",
                        "thinking": thinking,
                        "signature": t.base64ish(r.randint(200, 900)),
                    },
                    message_id,
                    request,
                    None,
                )
            )
        if step.thought and step.kind != "think":
            lines.append(
                self._assistant({"type": "text", "text": step.thought}, message_id, request, None)
            )
        if step.kind == "think":
            lines.append(
                self._assistant(
                    {"type": "text", "text": t.prose(1)}, message_id, request, "end_turn"
                )
            )
            return lines, len(lines)
        calls = []
        for tool_step in steps:
            name, tool_input = _tool_use(tool_step)
            call = f"toolu_01{t.base64ish(22)}"
            use = self._assistant(
                {
                    "type": "tool_use",
                    "id": call,
                    "name": name,
                    "input": tool_input,
                    "caller": {"type": "direct"},
                },
                message_id,
                request,
                "tool_use",
            )
            lines.append(use)
            calls.append((tool_step, call, use["uuid"]))
        for tool_step, call, source in calls:
            content, copy = _tool_result(tool_step, t)
            lines.append(
                self._user(
                    [
                        {
                            "tool_use_id": call,
                            "type": "tool_result",
                            "content": content,
                            "is_error": tool_step.exit_code != 0,
                        }
                    ],
                    toolUseResult=copy,
                    sourceToolAssistantUUID=source,
                )
            )
        return lines, len(lines)

    def _compaction(self) -> Iterator[dict[str, Any]]:
        """A compact boundary, its summary, and the files it re-attaches."""
        r, t = self.rng, self.texts
        logical = self.parent
        self.parent = None
        boundary = self._tree(
            "system",
            subtype="compact_boundary",
            content="Conversation compacted",
            isMeta=False,
            level="info",
            compactMetadata={
                "trigger": "auto",
                "preTokens": r.randint(150_000, 170_000),
                "postTokens": r.randint(5_000, 12_000),
                "durationMs": r.randint(30_000, 150_000),
            },
        )
        boundary["logicalParentUuid"] = logical
        yield boundary
        sections = [
            f"1. Primary Request and Intent:\n   {t.prose(3)}",
            f"2. Key Technical Concepts:\n{t.bullets(r.randint(3, 8))}",
            f"3. Files and Code Sections:\n{t.bullets(r.randint(2, 6))}",
            f"4. Errors and fixes:\n{t.bullets(r.randint(1, 4))}",
            f"5. Pending Tasks:\n{t.bullets(r.randint(1, 3))}",
            f"6. Current Work:\n   {t.prose(2)}",
        ]
        self.prompt_id = new_uuid(r)
        yield self._user(
            SUMMARY_HEAD + "\n\n".join(sections),
            isVisibleInTranscriptOnly=True,
            isCompactSummary=True,
        )
        for _ in range(r.randint(1, 3)):
            path = t.path()
            yield self._tree(
                "attachment",
                attachment={
                    "type": "compact_file_reference",
                    "filename": path,
                    "displayPath": path.split("/", 3)[-1],
                },
            )


def _tool_use(step: Step) -> tuple[str, dict[str, Any]]:
    if step.kind == "run":
        return "Bash", {"command": step.command, "description": step.command[:40]}
    if step.kind == "read":
        first, last = step.view_range or (1, 1)
        return "Read", {"file_path": step.path, "offset": first, "limit": last - first + 1}
    if step.kind == "edit":
        return "Edit", {
            "file_path": step.path,
            "old_string": step.old,
            "new_string": step.new,
            "replace_all": False,
        }
    if step.kind == "create":
        return "Write", {"file_path": step.path, "content": step.content}
    return "WebFetch", {"url": step.url, "prompt": "Summarise what this page says."}


def _tool_result(step: Step, texts: Texts) -> tuple[str, dict[str, Any]]:
    """The result the model reads, and the client's own copy of it (`toolUseResult`)."""
    if step.kind == "run":
        return step.output, {
            "stdout": step.output,
            "stderr": "",
            "interrupted": False,
            "isImage": False,
            "noOutputExpected": False,
        }
    if step.kind == "read":
        first, last = step.view_range or (1, 1)
        lines = step.output.split("\n")[1:]
        body = "\n".join(line.lstrip() for line in lines)
        return body, {
            "type": "text",
            "file": {
                "filePath": step.path,
                "content": body,
                "numLines": len(lines),
                "startLine": first,
                "totalLines": last,
            },
        }
    if step.kind == "edit":
        snippet = step.output.split("\n", 1)[-1]
        patch = [
            {
                "oldStart": 1,
                "oldLines": step.old.count("\n") + 1,
                "newStart": 1,
                "newLines": step.new.count("\n") + 1,
                "lines": [
                    *("-" + x for x in step.old.split("\n")),
                    *("+" + x for x in step.new.split("\n")),
                ],
            }
        ]
        text = f"The file {step.path} has been updated. Here's the result of running `cat -n` "
        return text + f"on a snippet of the edited file:\n{snippet}", {
            "filePath": step.path,
            "oldString": step.old,
            "newString": step.new,
            "structuredPatch": patch,
            "userModified": False,
            "replaceAll": False,
        }
    if step.kind == "create":
        return f"File created successfully at: {step.path}", {
            "type": "create",
            "filePath": step.path,
            "content": step.content,
            "structuredPatch": [],
        }
    return step.output, {
        "bytes": len(step.output.encode()),
        "code": 200,
        "codeText": "OK",
        "result": step.output,
        "durationMs": texts.rng.randint(300, 9000),
        "url": step.url,
    }


def write_session(path: Path, count: int, seed: int = 7, compacts: bool = True) -> Manifest:
    """Write a Claude Code session file of `count` lines to `path` (never compacted
    unless `compacts`)."""
    session = ClaudeSession(count, seed, compacts)
    write_lines(path, session.lines())
    return session.manifest
