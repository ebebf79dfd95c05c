"""Generate Gemini CLI sessions for the benchmark.

A session as Gemini CLI 0.61.0 writes it (`~/.gemini/tmp/<project>/chats/session-*.jsonl`):
a header and a `$set` of its context, then per turn the user's message, the model's
message written twice (as it arrives, then with its `toolCalls`, each carrying its
result), the results as a user message of function responses, and a `$set` of
`lastUpdated` after each. Every 1,000-3,000 records the session is resumed (a header, a
`$set` of the context alone, and a `$set` of the whole list); whenever the list passes
300-600 messages the client compresses: a `$set` of its context, a state snapshot, its
acknowledgement, and the last 30% of the list under new ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.sessions import Generated, Manifest, Step, new_uuid, write_lines

MODEL = "gemini-2.5-pro"
ACK = "Got it. Thanks for the additional context!"
TOOLS = {
    "run": "run_shell_command",
    "read": "read_file",
    "edit": "replace",
    "create": "write_file",
    "browse": "web_fetch",
}


class GeminiSession(Generated):
    """A long Gemini CLI session; `lines()` yields its records, then `manifest` is set."""

    def __init__(self, count: int, seed: int = 7, compacts: bool = True) -> None:
        super().__init__(count, seed)
        self.compacts = compacts
        self.session_id = new_uuid(self.rng)
        self.manifest = Manifest(0, 0, None, 0)
        self.listed: list[dict[str, Any]] = []  # the client's list, as it would write it
        self.calls = 0

    def _message(self, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        return {
            "id": new_uuid(self.rng),
            "timestamp": self.clock.iso_z(),
            "type": kind,
            "content": content,
            **extra,
        }

    def _header(self) -> dict[str, Any]:
        now = self.clock.iso_z()
        return {
            "sessionId": self.session_id,
            "projectHash": "5" * 64,
            "startTime": now,
            "lastUpdated": now,
            "kind": "main",
        }

    def lines(self) -> Iterator[dict[str, Any]]:
        t, r = self.texts, self.rng
        context = {
            "id": "d04923d38bb0f6017037e74183378ef4",
            "timestamp": self.clock.iso_z(),
            "type": "user",
            "content": [
                {"text": f"<session_context>\n{t.system_prompt(2000)}\n</session_context>"}
            ],
        }
        self.listed = [context]
        head: list[dict[str, Any]] = [self._header(), {"$set": {"messages": [context]}}]
        task = self._message("user", [{"text": t.task()}])
        head.append(task)
        self.listed.append(task)
        yield from head
        written, condensations = len(head), 0
        summary: str | None = None
        next_resume = written + r.randint(1_000, 3_000)
        next_compression = r.randint(300, 600) if self.compacts else None
        while written < self.count:
            if written >= next_resume:
                block = self._resume(context)
                next_resume = written + len(block) + r.randint(1_000, 3_000)
            elif next_compression is not None and len(self.listed) >= next_compression:
                block, summary = self._compression(context)
                condensations += 1
                next_compression = len(self.listed) + r.randint(300, 600)
            else:
                listed = list(self.listed)
                block = self._turn(self.agent.turn())
                if len(block) > self.count - written:  # the last: one message that fits
                    last = self._message("gemini", t.prose(1), model=MODEL)
                    self.listed, block = [*listed, last], [last]
            yield from block
            written += len(block)
        self.manifest = Manifest(written, len(self.listed), summary, condensations)

    def _turn(self, steps: list[Step]) -> list[dict[str, Any]]:
        t = self.texts
        first = steps[0]
        if first.kind == "user":
            message = self._message("user", [{"text": first.content}])
            self.listed.append(message)
            return [message, self._updated()]
        tools = [s for s in steps if s.kind in TOOLS]
        prompt = max(20_000, 1_750 * len(self.listed))  # past half the window at 300
        tokens = {"input": prompt, "output": 300, "cached": 0, "thoughts": 120, "tool": 0}
        tokens["total"] = tokens["input"] + tokens["output"]
        text = first.content if first.kind == "message" else ""
        thoughts = [{"subject": "Planning", "description": first.thought}] if first.thought else []
        arrived = self._message("gemini", text, thoughts=thoughts, tokens=tokens, model=MODEL)
        out = [arrived, self._updated()]
        if not tools:
            self.listed.append(arrived)
            return out
        calls, responses = [], []
        for step in tools:
            self.calls += 1
            name = TOOLS[step.kind]
            call_id = f"{name}__{name}_{1_795_873_971_703 + self.calls}_0"
            response = {
                "functionResponse": {
                    "id": call_id,
                    "name": name,
                    "response": {"output": step.output or t.prose(1)},
                }
            }
            calls.append(
                {
                    "id": call_id,
                    "name": name,
                    "args": _args(step),
                    "result": [response],
                    "status": "success",
                    "timestamp": self.clock.iso_z(),
                }
            )
            responses.append(response)
        called = arrived | {"toolCalls": calls}
        answered = self._message("user", responses)
        self.listed += [called, answered]
        return [*out, called, answered, self._updated()]

    def _updated(self) -> dict[str, Any]:
        return {"$set": {"lastUpdated": self.clock.iso_z()}}

    def _resume(self, context: dict[str, Any]) -> list[dict[str, Any]]:
        """A run that resumes: its header and context, then the whole list again (a
        model message's calls as parts, their results a message of their own)."""
        rewritten: list[dict[str, Any]] = []
        for message in self.listed:
            calls = message.get("toolCalls")
            if not calls:
                rewritten.append({k: v for k, v in message.items() if k not in ("tokens", "model")})
                continue
            parts = [
                {"functionCall": {"id": c["id"], "name": c["name"], "args": c["args"]}}
                for c in calls
            ]
            rewritten.append(
                {
                    "id": message["id"],
                    "timestamp": message["timestamp"],
                    "type": "gemini",
                    "content": parts,
                }
            )
            results = [part for c in calls for part in c["result"]]
            rewritten.append(
                {
                    "id": f"{message['id']}_response",
                    "timestamp": message["timestamp"],
                    "type": "user",
                    "content": results,
                }
            )
        self.listed = rewritten
        return [
            self._header(),
            {"$set": {"messages": [context]}},
            {"$set": {"sessionId": self.session_id}},
            {"$set": {"messages": rewritten}},
        ]

    def _compression(self, context: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
        t = self.texts
        snapshot = f"<state_snapshot>\n{t.prose_chars(3000)}\n</state_snapshot>"
        keep = self.listed[int(len(self.listed) * 0.7) :]
        while keep and keep[0]["type"] != "user":
            keep = keep[1:]
        kept = [m | {"id": new_uuid(self.rng)} for m in keep]
        self.listed = [
            context,
            self._message("user", [{"text": snapshot}]),
            self._message("gemini", [{"text": ACK}]),
            *kept,
        ]
        return [{"$set": {"messages": self.listed}}], snapshot


def _args(step: Step) -> dict[str, Any]:
    if step.kind == "run":
        return {"command": step.command, "description": step.thought[:80]}
    if step.kind == "read":
        return {"file_path": step.path}
    if step.kind == "edit":
        return {"file_path": step.path, "old_string": step.old, "new_string": step.new}
    if step.kind == "create":
        return {"file_path": step.path, "content": step.content}
    return {"prompt": f"Summarise {step.url}"}


def write_session(path: Path, count: int, seed: int = 7, compacts: bool = True) -> Manifest:
    """Write a session of `count` records to `path`."""
    session = GeminiSession(count, seed, compacts)
    write_lines(path, session.lines())
    return session.manifest
