"""A Gemini CLI view as what the client sends when it resumes, and as chat messages.

The client turns its list into turns (a gemini message's `toolCalls` become its
calls and, after it, a user turn of their results, `<id>_response`), puts a
context written afresh first, then hardens the turns before it sends them:
thoughts out, turns of one role joined, a call without a result in the next turn
given one saying the result was lost, a result without a call given a call, results
in the order of their calls, a first turn of the model preceded by a user turn, and
each call's id without the `<tool>__` the client writes in front of it.

The chat form maps a user turn to its function responses as `tool` messages (their
`output`, or the response as JSON) followed by a user message of its other parts,
and a model turn to an assistant message with its text and `tool_calls`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from condense_cli.core.jsonlines import as_dict, as_str, encode
from condense_cli.dialects.gemini_cli.events import (
    GeminiEvent,
    as_parts,
    calls_of,
    is_context,
    model_parts,
    response_parts,
)
from condense_cli.llm.messages import (
    APPROXIMATED,
    NOT_SENT,
    SYNTHESIZED,
    Change,
    Conversion,
    content_of,
    tool_call,
    tool_result,
)

LOST_RESULT = "The tool execution result was lost due to context management truncation."
CONTINUATION = "[Continuing from previous AI thoughts...]"

Turn = tuple[str, list[dict[str, Any]], GeminiEvent | None]  # role, parts, whose


def client_turns(events: list[GeminiEvent], out: Conversion) -> list[Turn]:
    """The turns the client sends for `events` (its new prompt aside)."""
    turns: list[Turn] = []
    if not events or not is_context(events[0].data):
        out.inserted.append(
            Change(
                SYNTHESIZED,
                None,
                None,
                "the client puts a context of its own first (the date, the folders), "
                "which this view does not hold",
            )
        )
    for event in events:
        data = event.data
        if is_context(data):
            out.approximated.append(
                Change(
                    APPROXIMATED,
                    event.id,
                    event.line,
                    "the client writes its context afresh when it resumes (date, folders); "
                    "this is the one the session recorded",
                )
            )
            parts = as_parts(data.get("content"))
            if len(parts) > 1:
                out.dropped.append(
                    Change(
                        NOT_SENT,
                        event.id,
                        event.line,
                        "the client drops a message that starts with its context when it "
                        "resumes (a restored checkpoint's first turn), and writes its context "
                        "afresh: what followed the context in it is not sent",
                    )
                )
            turns.append(("user", parts[:1], event))
        elif event.message_type == "gemini":
            turns.append(("model", model_parts(data), event))
            if calls_of(data) and response_parts(data):
                turns.append(("user", response_parts(data), event))
        else:
            turns.append(("user", as_parts(data.get("content")), event))
    return _harden(turns, out)


def _harden(turns: list[Turn], out: Conversion) -> list[Turn]:
    stripped = [(role, [p for p in parts if not p.get("thought")], e) for role, parts, e in turns]
    joined = _join(stripped)
    paired = _pair(joined, out)
    for index in range(1, len(paired)):
        role, parts, whose = paired[index]
        before = paired[index - 1]
        if role == "user" and before[0] == "model":
            order = [as_dict(p["functionCall"]).get("id") for p in before[1] if "functionCall" in p]
            answers = [p for p in parts if "functionResponse" in p]
            if order and answers:
                answers.sort(key=lambda p: _place(order, as_dict(p["functionResponse"]).get("id")))
                paired[index] = (
                    role,
                    answers + [p for p in parts if "functionResponse" not in p],
                    whose,
                )
    if paired and paired[0][0] == "model":
        out.inserted.append(
            Change(
                SYNTHESIZED, None, None, "a user turn before the model's first, as the client sends"
            )
        )
        paired.insert(0, ("user", [{"text": CONTINUATION}], None))
    return [(role, [_scrub(p) for p in parts], whose) for role, parts, whose in _join(paired)]


def _place(order: list[Any], call_id: Any) -> int:
    return order.index(call_id) if call_id in order else len(order)


def _join(turns: list[Turn]) -> list[Turn]:
    """Turns of one role in a row become one; empty turns go."""
    joined: list[Turn] = []
    for role, parts, whose in turns:
        if not parts:
            continue
        if joined and joined[-1][0] == role:
            joined[-1] = (role, joined[-1][1] + parts, joined[-1][2])
        else:
            joined.append((role, list(parts), whose))
    return joined


def _pair(turns: list[Turn], out: Conversion) -> list[Turn]:
    """Each call answered in the next turn, each result after its call, as the
    client mends them."""
    work = list(turns)
    result: list[Turn] = []
    index = 0
    while index < len(work):
        role, parts, whose = work[index]
        if role == "model":
            following = work[index + 1] if index + 1 < len(work) else None
            missing = [
                as_dict(p["functionCall"])
                for p in parts
                if "functionCall" in p
                and not _holds(following, "user", "functionResponse", as_dict(p["functionCall"]))
            ]
            if missing:
                answers = [
                    {
                        "functionResponse": {
                            "name": as_str(c.get("name")) or "unknown",
                            "id": c.get("id"),
                            "response": {"error": LOST_RESULT},
                        }
                    }
                    for c in missing
                ]
                for call in missing:
                    said = f"the call {as_str(call.get('id'))} has no result after it: the "
                    _put_in(out, whose, said + "client sends one saying the result was lost")
                if following is not None and following[0] == "user":
                    work[index + 1] = ("user", following[1] + answers, following[2])
                else:
                    work.insert(index + 1, ("user", answers, None))
        elif role == "user":
            previous = result[-1] if result else None
            orphans = [
                as_dict(p["functionResponse"])
                for p in parts
                if "functionResponse" in p
                and not _holds(previous, "model", "functionCall", as_dict(p["functionResponse"]))
            ]
            if orphans:
                calls: list[dict[str, Any]] = [
                    {"functionCall": {"name": r.get("name"), "id": r.get("id"), "args": {}}}
                    for r in orphans
                ]
                for answer in orphans:
                    said = f"the result {as_str(answer.get('id'))} follows no call of its own: "
                    _put_in(out, whose, said + "the client sends a call before it")
                if previous is not None and previous[0] == "model":
                    result[-1] = ("model", previous[1] + calls, previous[2])
                else:
                    result.append(("model", calls, None))
        if parts:
            result.append((role, parts, whose))
        index += 1
    return result


def _put_in(out: Conversion, whose: GeminiEvent | None, reason: str) -> None:
    """A message the client puts in beside `whose` event (None: beside none)."""
    event, line = (whose.id, whose.line) if whose is not None else (None, None)
    out.inserted.append(Change(SYNTHESIZED, event, line, reason))


def _holds(turn: Turn | None, role: str, kind: str, other: dict[str, Any]) -> bool:
    """Whether `turn` is `role`'s and holds a `kind` part (`functionCall` or
    `functionResponse`) of the same id and name as `other`: a call's answer in the turn
    after it, a result's call in the turn before."""
    if turn is None or turn[0] != role:
        return False
    pair = (other.get("id"), other.get("name"))
    return any(
        (as_dict(p[kind]).get("id"), as_dict(p[kind]).get("name")) == pair
        for p in turn[1]
        if kind in p
    )


def _scrub(part: dict[str, Any]) -> dict[str, Any]:
    """A part as the client sends it: what the API reads, call ids unprefixed."""
    scrubbed: dict[str, Any] = {}
    if isinstance(part.get("text"), str):
        scrubbed["text"] = part["text"]
    if "inlineData" in part:
        scrubbed["inlineData"] = part["inlineData"]
    for kind, body in (("functionCall", "args"), ("functionResponse", "response")):
        if part.get(kind):
            inner = as_dict(part[kind])
            name = as_str(inner.get("name"))
            made: dict[str, Any] = {"name": inner.get("name"), body: inner.get(body)}
            call_id = inner.get("id")
            if isinstance(call_id, str) and call_id:
                prefix = f"{name.strip() or 'generic_tool'}__"
                made["id"] = call_id.removeprefix(prefix)
            scrubbed[kind] = made
    if scrubbed.get("text") == "" and len(scrubbed) > 1:
        del scrubbed["text"]
    return scrubbed


def view_messages(events: list[GeminiEvent], out: Conversion) -> Iterator[dict[str, Any]]:
    """The chat messages of the turns the client sends for `events`."""
    for role, parts, _whose in client_turns(events, out):
        texts = [{"type": "text", "text": p["text"]} for p in parts if p.get("text")]
        if role == "model":
            calls = [as_dict(p["functionCall"]) for p in parts if "functionCall" in p]
            message: dict[str, Any] = {"role": "assistant", "content": content_of(texts) or None}
            if calls:
                message["tool_calls"] = [
                    tool_call(
                        as_str(c.get("id")),
                        as_str(c.get("name")),
                        encode(c.get("args") or {}).decode(),
                    )
                    for c in calls
                ]
            yield message
            continue
        for part in parts:
            if "functionResponse" in part:
                answer = as_dict(part["functionResponse"])
                yield tool_result(
                    as_str(answer.get("id")),
                    as_str(answer.get("name")),
                    _output(answer.get("response")),
                )
        if texts:
            yield {"role": "user", "content": content_of(texts)}


def _output(response: Any) -> str:
    """A function response as the model reads it in chat form: its `output` string,
    else the response as JSON."""
    if isinstance(response, dict) and isinstance(response.get("output"), str):
        return str(response["output"])
    return encode(response).decode()
