"""What a coding agent does in a session, in no log's format.

`Agent.step()` draws the next step of a long session (run a command, read or edit a
file, think, browse, talk to the user) with realistic texts from `Texts`. Each
dialect's writer turns steps into its own events, so every dialect's log tells the
same kind of story with the same kind of text. `Clock` hands out increasing
timestamps.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from bench.textpool import Texts

#: Step kinds and how often an agent takes them.
KINDS = ["run", "read", "edit", "create", "think", "browse", "message", "user"]
WEIGHTS = [37, 24, 15, 3, 7, 2, 7, 5]


@dataclass(slots=True)
class Step:
    """One thing the agent did and what came back."""

    kind: str  # one of KINDS
    thought: str  # what the model wrote before acting ("" for none)
    command: str = ""
    path: str = ""
    url: str = ""
    old: str = ""  # an edit's old and new text
    new: str = ""
    content: str = ""  # a created file's content, a message's text
    output: str = ""  # what the tool returned
    exit_code: int = 0
    view_range: tuple[int, int] | None = None
    parallel: bool = False  # issued in the same model response as the step before
    extra: dict[str, object] = field(default_factory=dict)


class Agent:
    """Draws the steps of one long session."""

    def __init__(self, texts: Texts) -> None:
        self.texts = texts
        self.rng = texts.rng
        self.previous = "user"
        self._pending: Step | None = None

    def turn(self) -> list[Step]:
        """The steps of one model response: a step and the tool calls made in parallel
        with it."""
        steps = [self._pending or self.step()]
        self._pending = None
        while True:
            step = self.step()
            if not step.parallel:
                self._pending = step
                return steps
            steps.append(step)

    def step(self) -> Step:
        """The next step; tool steps may run in parallel with the one before."""
        r, t = self.rng, self.texts
        kind = r.choices(KINDS, WEIGHTS)[0]
        parallel = (
            kind in ("run", "read") and self.previous in ("run", "read") and (r.random() < 0.15)
        )
        thought = "" if parallel or r.random() < 0.3 else t.prose(r.randint(1, 3))
        self.previous = kind
        if kind == "run":
            command, output, code = t.terminal()
            return Step(
                kind, thought, command=command, output=output, exit_code=code, parallel=parallel
            )
        if kind == "read":
            path = t.path()
            output, first, last, _ = t.view_of_file(path)
            return Step(
                kind, thought, path=path, output=output, view_range=(first, last), parallel=parallel
            )
        if kind == "edit":
            path = t.path()
            old, new, snippet, first = t.edit()
            output = (
                f"The file {path} has been edited. Here's the result of running `cat -n` on a "
                f"snippet of {path}:\n{t.numbered(snippet, first)}\nReview the changes and make "
                "sure they are as expected. Edit the file again if necessary."
            )
            return Step(kind, thought, path=path, old=old, new=new, output=output)
        if kind == "create":
            path = t.path()
            _, lines = t.file()
            start = r.randint(0, max(0, len(lines) - 10))
            content = "\n".join(lines[start : start + r.randint(10, 120)])
            return Step(
                kind,
                thought,
                path=path,
                content=content,
                output=f"File created successfully at: {path}",
            )
        if kind == "think":
            return Step(kind, t.prose(r.randint(2, 10)), output="Your thought has been logged.")
        if kind == "browse":
            url = t.url()
            return Step(kind, thought, url=url, output=t.page())
        if kind == "message":
            return Step(kind, "", content=t.prose(r.randint(1, 8)))
        return Step(kind, "", content=t.prose(r.randint(1, 5)))


@dataclass
class Manifest:
    """What a generated log holds, and what `condense view` must show of it."""

    events: int  # records written (lines; files for a V1 folder)
    view_events: int  # events in the replayed view, summaries included
    summary: str | None  # the summary the view shows last (None for none)
    condensations: int


class Clock:
    """Increasing timestamps: a few seconds between events, minutes now and then."""

    def __init__(self, rng: random.Random, start: float = 1_772_440_447.0) -> None:
        self.rng = rng
        self.now = start  # 2026-03-02T08:34:07Z

    def tick(self) -> float:
        r = self.rng.random()
        self.now += self.rng.uniform(0.01, 3.0) if r < 0.9 else self.rng.uniform(3, 240)
        return self.now

    def iso(self) -> str:
        """Local time without a zone, microseconds (Python's isoformat)."""
        return datetime.fromtimestamp(self.tick(), UTC).replace(tzinfo=None).isoformat()

    def iso_z(self) -> str:
        """UTC with milliseconds and a Z (JavaScript's toISOString)."""
        stamp = datetime.fromtimestamp(self.tick(), UTC).isoformat(timespec="milliseconds")
        return stamp.replace("+00:00", "Z")


def new_uuid(rng: random.Random) -> str:
    """A version-4 UUID drawn from `rng` (so logs are the same for a seed)."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


class Generated:
    """What every generator starts from: the event count, one seeded `Random`, and
    the texts, agent and clock drawn from it (always in this order)."""

    def __init__(self, count: int, seed: int = 7) -> None:
        self.count = count
        self.rng = random.Random(seed)
        self.texts = Texts(self.rng)
        self.agent = Agent(self.texts)
        self.clock = Clock(self.rng)


def write_lines(path: Path, records: Iterable[Any]) -> None:
    """Write `records` to `path` as JSON lines, in one buffered pass."""
    dumps = orjson.dumps
    with path.open("wb", buffering=1 << 20) as file:
        for record in records:
            file.write(dumps(record))
            file.write(b"\n")
