"""`condense audit`: what each condensation of a log lost, fact by fact.

For each condensation, the facts of the events it forgot (see `facts.py`), and
the log's pins the view held before it (`core.pins`), are looked up in the summary
it wrote, then in the events the view still holds right after it; a fact found in
neither is lost, pins first. The current view is audited the same
way against every fact any condensation forgot.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any

from condense_cli.analysis.carrying import INDEX_MIN_FACTS, Memory, Scans, event_texts, unique_names
from condense_cli.analysis.commands import core_command, exploring
from condense_cli.analysis.facts import KINDS, Fact, edits, extract, squash
from condense_cli.core.clientconfig import ClientConfig
from condense_cli.core.errors import ConfigError
from condense_cli.core.events import Event, View
from condense_cli.core.jsonlines import Items
from condense_cli.core.pins import carried
from condense_cli.core.text import plural
from condense_cli.dialects.base import CondensationStep, Replay
from condense_cli.dialects.reports import Threshold
from condense_cli.fast.halves import in_two, log_size, splits

if TYPE_CHECKING:
    from condense_cli.core.usage import Economics

OVERALL = "overall"


@dataclass
class Tally:
    """Facts of one kind: how many, where they were kept, and the lost ones."""

    facts: int = 0
    in_summary: int = 0
    in_view: int = 0
    lost: list[Fact] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return self.in_summary + self.in_view

    @property
    def share(self) -> float | None:
        """The share kept, in percent (None when there was nothing to keep)."""
        return 100 * self.kept / self.facts if self.facts else None

    def add(self, other: Tally) -> None:
        self.facts += other.facts
        self.in_summary += other.in_summary
        self.in_view += other.in_view
        self.lost += other.lost

    def to_dict(self) -> dict[str, Any]:
        share = self.share
        return {
            "facts": self.facts,
            "kept": self.kept,
            "in_summary": self.in_summary,
            "in_view": self.in_view,
            "lost": self.facts - self.kept,
            "kept_percent": round(share, 1) if share is not None else None,
        }


def new_tallies() -> dict[str, Tally]:
    return {kind: Tally() for kind in KINDS}


def total(tallies: dict[str, Tally]) -> Tally:
    """Every kind together."""
    whole = Tally()
    for tally in tallies.values():
        whole.add(tally)
    return whole


@dataclass
class Audit:
    """One condensation (or the current view) audited."""

    label: str
    id: object
    line: int | None
    forgotten_events: int
    summary_chars: int | None
    kinds: dict[str, Tally]
    threshold: Threshold | None = None  # where it fired against its client's threshold
    economics: Economics | None = None  # what it cost and saved, where the log says

    def lost(self) -> list[Fact]:
        """Every lost fact, by kind (contradictions and pins first, then the user's
        constraints), and within a kind what matters more first (`Fact.rank`)."""
        return [
            fact for kind in KINDS for fact in sorted(self.kinds[kind].lost, key=lambda f: f.rank)
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "id": self.id,
            "line": self.line,
            "forgotten_events": self.forgotten_events,
            "summary_chars": self.summary_chars,
            "kinds": {kind: tally.to_dict() for kind, tally in self.kinds.items()},
            "all": total(self.kinds).to_dict(),
            "lost": [lost_json(fact) for fact in self.lost()],
        } | (
            ({"threshold": self.threshold.to_json()} if self.threshold else {})
            | ({"economics": self.economics.to_json()} if self.economics else {})
        )


@dataclass
class LogAudit:
    """Every condensation of a log audited, the current view, and the totals."""

    path: str
    dialect: str
    condensations: list[Audit]
    current: Audit
    model: str | None = None  # the model the agent used last

    @property
    def overall(self) -> dict[str, Tally]:
        """Per kind, over every condensation."""
        tallies = new_tallies()
        for audit in self.condensations:
            for kind, tally in audit.kinds.items():
                tallies[kind].add(tally)
        return tallies

    def to_dict(self, lazy: bool = False) -> dict[str, Any]:
        """For JSON; `lazy`: each condensation made as it is written (`Items`)."""
        each = (a.to_dict() for a in self.condensations)
        return {
            "dialect": self.dialect,
            "log": self.path,
            "model": self.model,
            "condensations": Items(each) if lazy else list(each),
            "current_view": self.current.to_dict(),
            "overall": kinds_json(self.overall),
        }


def lost_json(fact: Fact) -> dict[str, Any]:
    """A lost fact for JSON: its kind, text, and the event a user's clause is from."""
    found: dict[str, Any] = {"kind": fact.kind, "fact": fact.text}
    if fact.source is not None:
        found["from"] = fact.source
    return found


def kinds_json(tallies: dict[str, Tally]) -> dict[str, Any]:
    """Per kind and every kind together, for JSON."""
    return {
        "kinds": {kind: t.to_dict() for kind, t in tallies.items()},
        "all": total(tallies).to_dict(),
    }


IN_SUMMARY, IN_VIEW, LOST = 0, 1, 2  # where a fact was found


def check_facts(
    facts: list[Fact],
    summaries: Iterable[str],
    kept: Iterable[Event],
    scans: Scans | None = None,
    split: bool = False,
) -> dict[str, Tally]:
    """Look each fact up in the summaries, then in the events kept (their texts
    scanned by `scans`, which holds the last view's, when given); with `split`, a
    forked child looks up the second half of the facts."""
    tallies = new_tallies()
    if not facts:
        return tallies  # nothing to look up: the texts are not read
    names = unique_names(facts)
    summary = Memory.of(summaries, loose=True)
    texts = (text for event in kept for text in event_texts(event))
    view = scans.memory(texts) if scans is not None else Memory.of(texts)
    if len(facts) >= INDEX_MIN_FACTS:
        view.index_words()

    def found(part: Iterable[Fact]) -> bytes:
        return bytes(
            IN_SUMMARY
            if summary.carries(fact, names)
            else IN_VIEW
            if view.carries(fact, names)
            else LOST
            for fact in part
        )

    if split:  # a forked child looks up the second half
        half = len(facts) // 2
        first, second = in_two(lambda: found(facts[:half]), lambda: found(facts[half:]))
        places = first + second
    else:
        places = found(facts)
    for fact, where in zip(facts, places, strict=True):
        tally = tallies[fact.kind]
        tally.facts += 1
        if where == IN_SUMMARY:
            tally.in_summary += 1
        elif where == IN_VIEW:
            tally.in_view += 1
        else:
            tally.lost.append(fact)
    return tallies


def without_summary(view: View, summary: str | None) -> list[Event]:
    """The events of `view` but the summary `summary` (its first occurrence)."""
    events = list(view)
    if summary is not None:
        for index, event in enumerate(events):
            if event.is_summary and event.text == summary:
                del events[index]
                break
    return events


NO_CHANGES = re.compile(
    r"(?i)\bno (?:code |file )?(?:changes|modifications|edits)(?: (?:made|applied))?(?: yet)?\b"
    r"|\bchanges:\s*(?:none|n/a)\b"
)
NO_TESTS = re.compile(
    r"(?i)\bno tests? (?:execution|run|runs|were run|have been run)\b"
    r"|\btests:\s*(?:none|not run)\b"
)
# A run that reported results (a collection error is no test execution).
TEST_RESULTS = re.compile(r"\b\d+ (?:passed|failed)\b|\bRan \d+ tests?\b|--- (?:PASS|FAIL)")
SCRATCH = re.compile(r"(?i)reproduc|repro|debug|scratch|/tmp_|(?:^|/)test_[^/]*$|_test\.py$")
TEST_RUNNERS = re.compile(
    r"\b(?:pytest|unittest|tox|nox|jest|vitest|mocha|cargo test|go test|npm test|make test)\b"
)


def contradictions(summary: str | None, forgotten: Iterable[Event]) -> list[Fact]:
    """What the summary says against the events it replaced: no changes made after
    a file of the code was changed (not a repro or scratch script), no tests run
    after a test run that reported results. The events are read only when the
    summary says either (few do)."""
    no_changes = NO_CHANGES.search(summary) if summary else None
    no_tests = NO_TESTS.search(summary) if summary else None
    if no_changes is None and no_tests is None:
        return []
    events = list(forgotten)
    found = []
    if no_changes is not None:
        changed = [e for e in events if edits(e) and not SCRATCH.search(_edited_path(e))]
        if changed:
            found.append(
                Fact(
                    "contradictions",
                    ("no changes",),
                    f"the summary says {no_changes.group(0)!r}, but "
                    f"{plural(len(changed), 'call')} it replaced changed "
                    f"{_edited_path(changed[0]) or 'a file'}",
                    changed[0].id,
                )
            )
    ran = _test_runs(events) if no_tests is not None else []
    if no_tests is not None and ran:
        found.append(
            Fact(
                "contradictions",
                ("no tests",),
                f"the summary says {no_tests.group(0)!r}, but the events it replaced ran tests "
                "that reported results",
                ran[0].id,
            )
        )
    return found


def _edited_path(event: Event) -> str:
    call = event.tool_call
    value = call[1].get("path") or call[1].get("file_path") if call is not None else None
    return value if isinstance(value, str) else ""


def _test_runs(events: list[Event]) -> list[Event]:
    """Test runs among `events` whose output (in `events` too) reported results."""
    outputs: dict[object, str] = {e.cause: e.text for e in events if e.cause is not None}
    outputs |= {e.tool_call_id: e.text for e in events if e.tool_call_id and not e.is_action}
    runs = []
    for event in events:
        call = event.tool_call
        command = call[1].get("command") if call is not None else None
        if not isinstance(command, str) or exploring(command):
            continue
        if not TEST_RUNNERS.search(core_command(command)[1]):
            continue
        output = outputs.get(event.key) or outputs.get(event.tool_call_id) or ""
        if TEST_RESULTS.search(output):
            runs.append(event)
    return runs


def audit_step(
    step: CondensationStep,
    pins: list[Fact],
    everything: bool = False,
    label: str = "",
    scans: Scans | None = None,
) -> tuple[Audit, list[Fact]]:
    """One condensation audited: what it lost of the facts of the events it forgot
    and of the `pins` the view before it carried; and those facts (`scans`: the
    texts of the last view audited, see `check_facts`)."""
    facts = [p for p in pins if p.text in carried([p.text], step.before)]
    facts += extract(step.forgotten, everything)
    summaries = [step.summary] if step.summary is not None else []
    kinds = check_facts(facts, summaries, without_summary(step.after, step.summary), scans)
    wrong = contradictions(step.summary, step.forgotten)
    kinds["contradictions"].facts += len(wrong)
    kinds["contradictions"].lost += wrong
    chars = len(step.summary) if step.summary is not None else None
    return Audit(label, step.id, step.line, len(step.forgotten), chars, kinds), facts


def pin_facts(replay: Replay) -> list[Fact]:
    """The log's pins, as facts."""
    return [Fact("pins", (squash(p),), p) for p in replay.pins()]


def audit_log(
    replay: Replay,
    everything: bool = False,
    client: ClientConfig | None = None,
    each_step: Callable[[CondensationStep, Audit], None] | None = None,
) -> LogAudit:
    """Audit every condensation of `replay`'s log and its current view (exploration
    commands only with `everything`; thresholds as `client`, the agent's settings,
    sets them, or its defaults). `each_step` sees every condensation with its audit,
    while its views are still at hand."""
    replay.require("audits")
    audits: list[Audit] = []
    forgotten: dict[tuple[str, str], Fact] = {}
    pins = pin_facts(replay)
    # `each_step` sees each audit with its threshold
    after = each_step is None and replay.thresholds_after_steps
    thresholds = {} if after else replay.thresholds(client)
    audited: Iterable[Audited]
    big = splits(log_size(replay.path))
    if each_step is None and big:
        audited = _in_two_processes(replay, pins, everything)
    else:
        audited = _steps_audited(replay, pins, everything, each_step, thresholds)
    for audit, facts in audited:
        audits.append(audit)
        for fact in facts:
            forgotten.setdefault((fact.kind, fact.key), fact)
    if after:
        thresholds = replay.thresholds(client)
    for audit in audits:
        audit.threshold = thresholds.get(audit.line) if audit.line is not None else None
    weighed(replay, audits)
    view = replay.view()
    summaries = [e.text for e in view if e.is_summary]
    kept = [e for e in view if not e.is_summary]
    kinds = check_facts(list(forgotten.values()), summaries, kept, split=big)
    current = Audit(
        "current view",
        None,
        None,
        replay.forgotten_events,
        sum(len(s) for s in summaries) if summaries else None,
        kinds,
    )
    return LogAudit(replay.path, replay.dialect, audits, current, replay.model)


Audited = tuple[Audit, list[Fact]]


def _steps_audited(
    replay: Replay,
    pins: list[Fact],
    everything: bool,
    each_step: Callable[[CondensationStep, Audit], None] | None,
    thresholds: dict[int, Threshold],
) -> Iterator[Audited]:
    """Each condensation audited in turn, `each_step` shown it with its audit."""
    scans = Scans()
    for number, step in enumerate(replay.condensation_steps(), start=1):
        audit, facts = audit_step(step, pins, everything, f"condensation {number}", scans)
        if each_step is not None:
            audit.threshold = thresholds.get(step.line)
            each_step(step, audit)
        yield audit, facts


def _every_other(
    replay: Replay, pins: list[Fact], everything: bool, parity: int, skip: Container[int] = ()
) -> Iterator[tuple[int, Audited | None]]:
    """Each condensation's number, with its audit when the number has this parity (and
    is not in `skip`), else None: each of two processes walks every step and audits
    half."""
    scans = Scans()
    for number, step in enumerate(replay.condensation_steps(), start=1):
        if number % 2 == parity and number not in skip:
            yield number, audit_step(step, pins, everything, f"condensation {number}", scans)
        else:
            yield number, None


def _in_two_processes(replay: Replay, pins: list[Fact], everything: bool) -> list[Audited]:
    """Every condensation audited, half of them by a forked child, in the log's
    order: exactly what one process gives. A dialect whose steps start anywhere
    gives the child the second half to walk; otherwise each process walks every
    step and audits every other one (the walk is cheap, the audits are not). What
    the child did not send (it failed, or no process could be forked) is done here."""
    from condense_cli.fast.halves import Worker

    halves = replay.steps_start_anywhere and replay.step_count > 1
    middle = replay.step_count // 2 + 1 if halves else 0  # the child's first

    def child_steps() -> Iterator[tuple[int, Audited]]:
        replay.forked()
        if halves:
            return _new_facts_only(_audited_from(replay, pins, everything, middle))
        every_other = _every_other(replay, pins, everything, 1)
        return _new_facts_only((n, a) for n, a in every_other if a is not None)

    child = Worker.start(child_steps)
    done: dict[int, Audited] = {}
    steps = replay.step_count if halves else 0  # else counted by the walk
    try:
        if halves:
            done.update(_audited_from(replay, pins, everything, 1, stop=middle))
        else:
            for number, audited in _every_other(replay, pins, everything, 0):
                steps = number
                if audited is not None:
                    done[number] = audited
        if child is not None:
            done.update(child.items())
    finally:
        if child is not None:
            child.stop()
    if len(done) < steps:  # walk again only for what the child did not send
        if halves:
            done.update(_audited_from(replay, pins, everything, middle, skip=done))
        else:
            again = _every_other(replay, pins, everything, 1, skip=done)
            done.update((n, a) for n, a in again if a is not None)
    return [done[number] for number in sorted(done)]


def _new_facts_only(audited: Iterable[tuple[int, Audited]]) -> Iterator[tuple[int, Audited]]:
    """Each audit with only the facts (of its events) that no audit before it here
    had: `audit_log` keeps the first fact of each kind and key, in the log's order,
    and the ones left out here come after one it is sent."""
    sent: set[tuple[str, str]] = set()
    for number, (audit, facts) in audited:
        new = []
        for fact in facts:
            if (fact.kind, fact.key) not in sent:
                sent.add((fact.kind, fact.key))
                new.append(fact)
        yield number, (audit, new)


def _audited_from(
    replay: Replay,
    pins: list[Fact],
    everything: bool,
    first: int,
    stop: int | None = None,
    skip: Container[int] = (),
) -> Iterator[tuple[int, Audited]]:
    """The condensations from the `first`-th on (to `stop`, left out), audited with
    their numbers, but those in `skip`; the walk starts at the first."""
    scans = Scans()
    steps = replay.condensation_steps_from(first)
    for number, step in enumerate(steps if stop is None else islice(steps, stop - first), first):
        if number not in skip:
            yield number, audit_step(step, pins, everything, f"condensation {number}", scans)


def weighed(replay: Replay, audits: list[Audit]) -> None:
    """Give each condensation's audit what it cost and saved (`analysis.economics`)."""
    from condense_cli.analysis.economics import matched

    if not audits:
        return
    found = matched(replay.spending(), [audit.line for audit in audits])
    for audit, figures in zip(audits, found, strict=True):
        audit.economics = figures


# --- thresholds (`--fail-under`) ------------------------------------------------------


def parse_threshold(value: str) -> tuple[str, float]:
    """`80` (every fact together) or `paths=80` (one kind) -> (kind or overall, percent)."""
    kind, sep, raw = value.rpartition("=")
    kind = kind.strip() if sep else OVERALL
    if kind not in (OVERALL, *KINDS):
        raise ConfigError(
            f"--fail-under {value!r}: {kind!r} is not a kind of fact",
            hint=f"give a percentage, or KIND=PERCENT with KIND one of: {', '.join(KINDS)}",
        )
    try:
        percent = float(raw.strip().removesuffix("%"))
    except ValueError:
        percent = -1.0
    if not 0 <= percent <= 100:
        raise ConfigError(f"--fail-under {value!r}: the percentage must be a number from 0 to 100")
    return kind, percent


def combined(audits: list[LogAudit], into: dict[str, Tally] | None = None) -> dict[str, Tally]:
    """Per kind, over every condensation of every log (added to `into`, if given)."""
    tallies = new_tallies() if into is None else into
    for audit in audits:
        for kind, tally in audit.overall.items():
            tallies[kind].add(tally)
    return tallies


def failures(overall: dict[str, Tally], thresholds: list[tuple[str, float]]) -> list[str]:
    """What falls under its threshold, one line each (kinds without facts pass)."""
    found = []
    for kind, percent in thresholds:
        tally = total(overall) if kind == OVERALL else overall[kind]
        share = tally.share
        if share is not None and share < percent:
            found.append(f"{kind}: {share:.1f}% of {tally.facts:,} facts kept, under {percent:g}%")
    return found
