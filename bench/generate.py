"""Generate realistic OpenHands-style session logs for the benchmark.

A session: a system prompt, a user message and its recall, then command/output
pairs, file reads and edits, thoughts, large browse observations, and a rolling
LLM-style condensation about every 100 events (range + summary at offset 1).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import orjson

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


def events(count: int, seed: int = 7):
    """Yield `count` events (dicts) of a long session."""
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


def write_log(path: Path, count: int) -> None:
    """Write a log of `count` events to `path` (one buffered pass)."""
    with path.open("wb", buffering=1 << 20) as file:
        for event in events(count):
            file.write(orjson.dumps(event))
            file.write(b"\n")


if __name__ == "__main__":
    write_log(Path(sys.argv[1]), int(sys.argv[2]))
