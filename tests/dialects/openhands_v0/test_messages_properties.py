"""Properties of the V0 conversion to messages, on generated logs: model responses
with parallel calls, observations that come late, never or out of order, user and
agent messages, and condensations that forget any of it."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from condense_cli.dialects import read_log
from condense_cli.llm.messages import message_text
from tests.conftest import lines_of

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MARKER = re.compile(r"\b[umco]\d+\b")  # every text in a generated log is one marker


@st.composite
def logs(draw: Any) -> list[dict[str, Any]]:
    """A log whose every text is a unique marker: `u<id>` for messages, `c<id>` for
    commands (also a call's arguments), `o<id>` for outputs, `m<id>` for summaries."""
    events: list[dict[str, Any]] = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "u1"}}
    ]
    if draw(st.booleans()):
        system = {"id": 0, "source": "agent", "action": "system", "args": {"content": "u0"}}
        events.insert(0, system)
    eid = 2
    waiting: list[tuple[int, str]] = []  # calls issued, not answered yet
    for _ in range(draw(st.integers(1, 30))):
        kind = draw(st.sampled_from(["user", "agent", "response", "result", "condensation"]))
        if kind in ("user", "agent"):
            events.append(
                {"id": eid, "source": kind, "action": "message", "args": {"content": f"u{eid}"}}
            )
            eid += 1
        elif kind == "response":
            ids = list(range(eid, eid + draw(st.integers(1, 3))))
            calls = [(f"t{i}", f"c{i}") for i in ids]
            response = {
                "id": f"r{eid}",
                "choices": [
                    {
                        "message": {
                            "content": "",
                            "tool_calls": [
                                {"id": t, "function": {"name": "bash", "arguments": c}}
                                for t, c in calls
                            ],
                        }
                    }
                ],
            }
            for i, (t, c) in zip(ids, calls, strict=True):
                meta = {"tool_call_id": t, "function_name": "bash", "model_response": response}
                events.append(
                    {
                        "id": i,
                        "source": "agent",
                        "action": "run",
                        "args": {"command": c},
                        "tool_call_metadata": meta,
                    }
                )
                waiting.append((i, t))
            eid += len(ids)
        elif kind == "result" and waiting:
            cause, call = waiting.pop(draw(st.integers(0, len(waiting) - 1)))
            events.append(
                {
                    "id": eid,
                    "source": "agent",
                    "observation": "run",
                    "content": f"o{eid}",
                    "cause": cause,
                    "extras": {},
                    "tool_call_metadata": {"tool_call_id": call, "function_name": "bash"},
                }
            )
            eid += 1
        elif kind == "condensation" and events:
            ids = sorted(draw(st.sets(st.sampled_from([e["id"] for e in events]), max_size=5)))
            summary = draw(st.booleans())
            args = {
                "forgotten_event_ids": ids,
                "forgotten_events_start_id": None,
                "forgotten_events_end_id": None,
                "summary": f"m{eid}" if summary else None,
                "summary_offset": draw(st.integers(0, 4)) if summary else None,
            }
            events.append({"id": eid, "source": "agent", "action": "condensation", "args": args})
            eid += 1
    return events


def convert(events: list[dict[str, Any]]) -> tuple[Any, Any]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "log.jsonl"
        path.write_bytes(lines_of(events))
        with read_log(str(path)) as replay:
            view = replay.view()
            return view, replay.messages(view)


@SETTINGS
@given(logs())
def test_every_tool_message_answers_a_call_just_made(events: list[dict[str, Any]]) -> None:
    _, conversion = convert(events)
    messages = conversion.messages
    for at, message in enumerate(messages):
        if message["role"] != "tool":
            continue
        before = at - 1
        while messages[before]["role"] == "tool":  # the other results of the same response
            before -= 1
        issuer = messages[before]
        assert issuer["role"] == "assistant"
        assert message["tool_call_id"] in [c["id"] for c in issuer["tool_calls"]]


@SETTINGS
@given(logs())
def test_every_issued_call_is_answered_once(events: list[dict[str, Any]]) -> None:
    _, conversion = convert(events)
    messages = conversion.messages
    for at, message in enumerate(messages):
        calls = [c["id"] for c in message.get("tool_calls") or ()]
        answers = [m["tool_call_id"] for m in messages[at + 1 : at + 1 + len(calls)]]
        assert answers == calls


@SETTINGS
@given(logs())
def test_the_messages_say_what_the_view_says_less_what_was_dropped(
    events: list[dict[str, Any]],
) -> None:
    """Every event of the view that was not dropped is read by the model, and no
    dropped event is. Besides those (and re-inserted messages), the model reads
    only the calls of a model response that it re-sends whole, with a call whose
    own action was forgotten (as OpenHands does: it sends the response it stored)."""
    view, conversion = convert(events)
    read = set(MARKER.findall("\n".join(message_text(m) for m in conversion.messages)))
    dropped = {c.event for c in conversion.dropped}
    kept = {e.text for e in view if e.id not in dropped}
    inserted = {
        e["args"]["content"] for e in events if e["id"] in {c.event for c in conversion.inserted}
    }
    assert kept <= read
    assert not read & {e.text for e in view if e.id in dropped}
    resent = {
        c["function"]["arguments"] for m in conversion.messages for c in m.get("tool_calls") or ()
    }
    assert read == kept | inserted | resent
    assert all(c.kind in ("unmatched call", "orphan result") for c in conversion.dropped)
