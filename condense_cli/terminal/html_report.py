"""`condense report`: one self-contained HTML page of one or more sessions.

The page needs nothing but itself: its style and script are inline, its charts are
SVG drawn here, and its Content-Security-Policy lets no request leave it and no script
run but its own (allowed by hash). Every text of a log is masked (`core.redact`),
made printable (`core.text.sanitize`: bidi overrides and other invisible controls
shown as escapes) and escaped once, by Jinja2's autoescape (an element's text by the
`content` filter, which leaves quotes as they are: they mean nothing outside an
attribute, and a session's JSON is full of them); no text of a log becomes an
attribute the browser acts on (links are the page's own `#` anchors).

Big sessions stay usable: the first `EAGER_EVENTS` events are drawn at once, the
rest wait in `<template>` chunks (parsed, never laid out) that the script brings in
as the reader scrolls, searches or follows a link; an event's text is folded past a
few lines and cut at `SHOWN_CHARS`.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from condense_cli.analysis.audit import Audit, total
from condense_cli.analysis.economics import total as economics_total
from condense_cli.core.events import Event
from condense_cli.core.intervals import runs as id_runs
from condense_cli.core.redact import mask
from condense_cli.core.text import plural, sanitize
from condense_cli.terminal.dollars import net, weighed_line

if TYPE_CHECKING:
    from markupsafe import Markup

    from condense_cli.analysis.timeline import Band, Timeline
    from condense_cli.condensers.compare import Standing
    from condense_cli.condensers.simulate import Run

EAGER_EVENTS = 2000  # drawn when the page opens
CHUNK_EVENTS = 1000  # then a chunk at a time
FOLD_CHARS = 1200  # a longer text is folded to its first lines
FOLD_LINES = 12
SHOWN_CHARS = 20_000  # an event's text is cut here (the log keeps it whole)
CHART_WIDTH, CHART_HEIGHT = 960, 220
CHART_COLOURS = ("#2563eb", "#15803d", "#7c3aed", "#be185d", "#0e7490", "#4b5563")


def shown(text: str) -> str:
    """A log's text as the page shows it: secrets masked, controls made visible."""
    return sanitize(mask(text))


@dataclass
class Row:
    """One event as the page shows it."""

    index: int
    anchor: str
    id: str
    who: str  # user, agent, tool or environment
    label: str
    thought: str
    call: str | None  # the tool and its arguments, for an action that calls one
    text: str
    folded: bool
    preview: str
    cut: int  # characters of the text not shown
    by: int | None  # the condensation that forgot it (None: in the current view)
    answers: str | None  # the anchor of the call a result answers
    instruction: bool
    result: str | None = None  # the anchor of a call's result


@dataclass
class Mention:
    """An event of a later session of the project that names a lost fact again."""

    session: str
    id: str
    when: str
    command: str  # the command that shows it in its session


@dataclass
class LostFact:
    kind: str
    text: str
    anchor: str | None  # the event it was first seen in
    again: list[Mention] = field(default_factory=list)  # (`report` fills it in)


@dataclass
class BandPage:
    """One condensation as the page shows it."""

    number: int
    anchor: str
    id: str
    line: int
    summary: str | None
    covers: list[tuple[Row, Row]]  # runs of forgotten events: the first and the last
    forgotten: list[Row]
    tallies: list[tuple[str, int, int, int]]  # kind, facts, kept, lost
    lost: list[LostFact]
    fired: str | None  # against the client's threshold
    events: tuple[int, int]
    tokens: tuple[int, int]
    cost: str | None = None  # what it cost and saved, in words, where the log says
    net: str | None = None  # the same, as its net in dollars

    @property
    def heading(self) -> str:
        parts = [f"forgot {plural(len(self.forgotten), 'event')}"]
        parts.append(
            f"summary of {len(self.summary):,} chars" if self.summary is not None else "no summary"
        )
        lost = self.tallies[-1][3]  # every kind together
        parts.append(f"{plural(lost, 'fact')} lost")
        return " · ".join(parts)


@dataclass
class Chart:
    """An SVG line chart of the view's size per step."""

    title: str
    unit: str
    lines: list[tuple[str, str, str]]  # label, colour, points
    marks: list[tuple[float, str, str]]  # x, band anchor, label
    levels: list[tuple[float, str]]  # y, label (a client's threshold)
    ticks: list[tuple[float, str]]  # y, label
    steps: list[tuple[float, str]]  # x, label
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT


@dataclass(frozen=True)
class Configured:
    """One simulated configuration's row of a log's page, and its bar."""

    label: str
    tokens: str
    cached: str
    condensations: int
    kept: str
    dollars: str
    against: str
    width: float  # of its bar, in percent of the dearest's


def _ranked(rows: list[Standing]) -> list[Configured]:
    """The configurations, cheapest first, each with a bar of its dollars (of its
    tokens sent, where the log's model has no price)."""
    from condense_cli.condensers.compare import ranked
    from condense_cli.terminal.dollars import dollars

    order = ranked(rows)
    priced = all(row.priced for row in order)
    sizes = [row.dollars if priced else float(row.prompt) for row in order]
    top = max(sizes, default=0) or 1
    made = []
    for row, size in zip(order, sizes, strict=True):
        change = row.uncondensed - row.dollars
        made.append(
            Configured(
                shown(row.label),
                f"{row.prompt:,}",
                f"{row.cached_share:.0%}" if row.cached_share is not None else "-",
                row.condensations,
                f"{row.kept_share:.0%} of {row.facts:,}" if row.kept_share is not None else "-",
                dollars(row.dollars) if row.priced else "$?",
                f"{dollars(abs(change))} {'saved' if change >= 0 else 'more'}"
                if row.priced
                else "?",
                round(100 * size / top, 1),
            )
        )
    return made


@dataclass
class LogPage:
    """One log's part of the page."""

    number: int
    anchor: str
    title: str
    dialect: str
    figures: list[tuple[str, str]]
    charts: list[Chart]
    items: list[list[tuple[str, Any]]]  # chunks of ("event", Row) / ("band", BandPage) / ...
    current: list[tuple[str, int, int, int]]
    current_lost: list[LostFact]
    unit: str  # what the view is measured in: tokens or chars
    counts: dict[str, int] = field(default_factory=dict)  # for the index and the view now
    configurations: list[Configured] = field(default_factory=list)  # ranked, cheapest first


def _who(event: Event) -> str:
    if event.source == "user":
        return "user"
    if event.is_action:
        return "agent" if event.source == "agent" else event.source or "environment"
    if event.tool_call_id is not None or event.cause is not None:
        return "tool"
    return "environment"


def _row(event: Event, index: int, prefix: str, by: int | None, answers: str | None) -> Row:
    call = event.tool_call
    call_text = None
    if call is not None:
        arguments = orjson.dumps(call[1], option=orjson.OPT_INDENT_2).decode()
        call_text = shown(f"{call[0]} {arguments}")
    text = event.text
    if call is not None and _said_by_call(text, call[1]):
        text = ""  # the call's arguments (or one of them, a command) as text: shown once
    cut = max(0, len(text) - SHOWN_CHARS)
    text = shown(text[:SHOWN_CHARS]).strip("\n")
    lines = text.splitlines()
    folded = len(text) > FOLD_CHARS or len(lines) > FOLD_LINES
    preview = "\n".join(lines[:FOLD_LINES])[:FOLD_CHARS] if folded else text
    label = event.type or event.kind
    if event.url:
        label += f" {event.url}"
    return Row(
        index,
        f"{prefix}-e{index}",
        sanitize(str(event.id), one_line=True),
        _who(event),
        shown(label).replace("\n", " "),
        shown(event.thought[:SHOWN_CHARS]).strip("\n"),
        call_text,
        text,
        folded,
        preview,
        cut,
        by,
        answers,
        event.is_instruction,
    )


def _said_by_call(text: str, arguments: object) -> bool:
    """Whether `text` says no more than the call's `arguments` do: they written as JSON,
    or the one argument that is the text (a command's line)."""
    if isinstance(arguments, dict) and text.strip() and text in arguments.values():
        return True
    if not text.startswith("{"):
        return False
    try:
        return bool(orjson.loads(text) == arguments)
    except orjson.JSONDecodeError:
        return False


def _tallies(audit: Audit) -> list[tuple[str, int, int, int]]:
    rows = [(k, t.facts, t.kept, t.facts - t.kept) for k, t in audit.kinds.items() if t.facts]
    every = total(audit.kinds)
    return [*rows, ("all", every.facts, every.kept, every.facts - every.kept)]


def _lost(audit: Audit, anchors: dict[str, str]) -> list[LostFact]:
    found = []
    for fact in audit.lost():
        seen = fact.seen if fact.seen is not None else fact.source
        found.append(LostFact(fact.kind, shown(fact.text), anchors.get(str(seen))))
    return found


def _band(band: Band, prefix: str, rows: list[Row], anchors: dict[str, str]) -> BandPage:
    covers = [(rows[first], rows[last]) for first, last in id_runs(band.forgotten)]
    threshold, figures = band.audit.threshold, band.audit.economics
    return BandPage(
        band.number,
        f"{prefix}-c{band.number}",
        sanitize(str(band.id), one_line=True),
        band.line,
        shown(band.summary) if band.summary is not None else None,
        covers,
        [rows[i] for i in band.forgotten],
        _tallies(band.audit),
        _lost(band.audit, anchors),
        threshold.describe() if threshold is not None else None,
        band.events,
        band.tokens,
        weighed_line(figures) if figures is not None else None,
        net(figures) if figures is not None else None,
    )


def _thin(points: list[tuple[int, int]], columns: int) -> list[tuple[int, int]]:
    """At most about 4 points per column: each column's first, lowest, highest and
    last, so peaks and drops survive."""
    if len(points) <= columns * 4:
        return points
    last_step = points[-1][0] or 1
    kept: list[tuple[int, int]] = []
    bucket: list[tuple[int, int]] = []
    column = 0
    for point in points:
        at = point[0] * columns // (last_step + 1)
        if at != column and bucket:
            kept += _corners(bucket)
            bucket = []
        column = at
        bucket.append(point)
    return kept + _corners(bucket)


def _corners(bucket: list[tuple[int, int]]) -> list[tuple[int, int]]:
    low = min(bucket, key=lambda p: p[1])
    high = max(bucket, key=lambda p: p[1])
    return sorted({bucket[0], low, high, bucket[-1]}, key=bucket.index)


def _chart(
    title: str,
    unit: str,
    lines: list[tuple[str, list[tuple[int, int]]]],
    marks: list[tuple[int, str, str]],
    levels: list[tuple[int, str]],
    steps: int,
) -> Chart:
    """The chart of `lines` (label, (step, value) points) over `steps` steps."""
    top = max([v for _, points in lines for _, v in points] + [v for v, _ in levels] + [1])
    top = _round_up(top)
    left, right, upper, lower = 60, 8, 8, 22
    inner_w = CHART_WIDTH - left - right
    inner_h = CHART_HEIGHT - upper - lower
    span = max(steps - 1, 1)

    def x(step: int) -> float:
        return round(left + inner_w * step / span, 1)

    def y(value: int) -> float:
        return round(upper + inner_h * (1 - value / top), 1)

    drawn = []
    for number, (label, points) in enumerate(lines):
        thinned = _thin(points, inner_w)
        text = " ".join(f"{x(s)},{y(v)}" for s, v in thinned)
        drawn.append((label, CHART_COLOURS[number % len(CHART_COLOURS)], text))
    return Chart(
        title,
        unit,
        drawn,
        [(x(step), anchor, label) for step, anchor, label in marks],
        [(y(value), label) for value, label in levels],
        [(y(v), _short(v)) for v in (0, top // 2, top)],
        [(x(s), str(s + 1)) for s in sorted({0, span // 2, span})],
    )


def _short(value: int) -> str:
    """`0`, `850`, `25k`, `1.5M`."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return str(value)


def _round_up(value: int) -> int:
    """A round number at or above `value` (1, 2 or 5 times a power of ten)."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= value:
                return step * scale
        scale *= 10


def log_page(
    number: int,
    line: Timeline,
    runs: list[Run],
    unit: str,
    standings_of: list[Standing] | None = None,
) -> LogPage:
    """The part of the page for one log (`runs`: the simulated condensers; `rows`:
    the same in dollars and facts kept, as `simulate --compare` ranks them)."""
    prefix = f"l{number}"
    by = line.forgotten_by
    anchors: dict[str, str] = {}  # an event's id -> its anchor
    calls: dict[object, int] = {}  # a tool call's id, and an action's key -> its index
    answered: dict[int, int] = {}  # a result's index -> its call's
    for index, event in enumerate(line.events):
        anchors.setdefault(str(event.id), f"{prefix}-e{index}")
        if event.is_action:
            if event.tool_call_id is not None:
                calls.setdefault(event.tool_call_id, index)
            if event.key is not None:
                calls.setdefault(event.key, index)
        else:
            call = calls.get(event.tool_call_id, calls.get(event.cause))
            if call is not None:
                answered[index] = call
    rows = []
    for index, event in enumerate(line.events):
        call = answered.get(index)
        answers = f"{prefix}-e{call}" if call is not None else None
        rows.append(_row(event, index, prefix, by.get(index), answers))
    for result, call in answered.items():
        rows[call].result = rows[result].anchor
    bands = [_band(b, prefix, rows, anchors) for b in line.bands]
    items = _items(rows, bands, line)
    charts = _charts(line, prefix, runs, unit)
    saved = line.history_tokens - line.view_tokens
    lost = line.facts_lost
    figures = [
        ("dialect", line.dialect),
        ("model", shown(line.model) if line.model else "not recorded"),
        ("events", f"{len(rows):,}" if line.whole else f"{len(rows):,} (the view: no history)"),
        ("in view now", _in_view(line)),
        ("condensations", f"{len(bands):,}" if line.audited else "not read for this dialect"),
        (f"view {unit}", f"{line.view_tokens:,}"),
        (f"{unit} saved", f"{saved:,}" if line.whole else "unknown without the history"),
        ("facts lost", f"{lost:,}" if line.audited else "not audited for this dialect"),
    ]
    weighed = [b.audit.economics for b in line.bands if b.audit.economics is not None]
    if weighed:
        figures.append(("compactions' net", net(economics_total(weighed))))
    return LogPage(
        number,
        prefix,
        shown(line.path).replace("\n", " "),
        line.dialect,
        figures,
        charts,
        items,
        _tallies(line.audit.current),
        _lost(line.audit.current, anchors),
        unit,
        {
            "events": len(rows),
            "in_view": len(line.in_view) + line.summaries,
            "condensations": len(bands),
            "saved": saved,
            "lost": lost,
        },
        _ranked(standings_of or []),
    )


def _items(rows: list[Row], bands: list[BandPage], line: Timeline) -> list[list[tuple[str, Any]]]:
    """The timeline in chunks: the first `EAGER_EVENTS` events, then `CHUNK_EVENTS` at a
    time, each condensation after the event it fired at."""
    fired: dict[int, list[BandPage]] = {}
    for band, placed in zip(bands, line.bands, strict=True):
        fired.setdefault(placed.at, []).append(band)
    requested = set(line.requests)
    chunks: list[list[tuple[str, Any]]] = [[("band", b) for b in fired.get(-1, [])]]
    if -1 in requested:
        chunks[0].append(("request", None))
    in_chunk = 0  # events in the last chunk
    for row in rows:
        if in_chunk == (EAGER_EVENTS if len(chunks) == 1 else CHUNK_EVENTS):
            chunks.append([])
            in_chunk = 0
        in_chunk += 1
        chunk = chunks[-1]
        chunk.append(("event", row))
        chunk.extend(("band", b) for b in fired.get(row.index, []))
        if row.index in requested:
            chunk.append(("request", None))
    return chunks


def _charts(line: Timeline, prefix: str, runs: list[Run], unit: str) -> list[Chart]:
    """The view's size per step in `unit` and in events: this session's, with a drop
    at each condensation, and each simulated run's; the client's thresholds."""
    marks = [(b.at, f"{prefix}-c{b.number}", f"condensation {b.number}") for b in line.bands]
    thresholds = [b.audit.threshold for b in line.bands if b.audit.threshold is not None]
    fired = {band.at: band for band in line.bands}
    charts = []
    for title, measure, values, in_unit in (
        (f"View {unit} per step", unit, line.tokens, True),
        ("View events per step", "events", line.sizes, False),
    ):
        actual = []
        for step, value in enumerate(values):
            actual.append((step, value))
            band = fired.get(step)
            if band is not None:
                actual.append((step, (band.tokens if in_unit else band.events)[1]))
        lines = [("this session", actual)]
        lines += [
            (run.label, list(enumerate(run.tokens if in_unit else run.events))) for run in runs
        ]
        levels = sorted(
            {
                (t.threshold, f"{t.source}: {t.threshold:,} {t.unit}{_counted_by(t.unit)}")
                for t in thresholds
                if t.unit == measure and not t.manual
            }
        )
        charts.append(_chart(title, measure, lines, marks, levels, len(values)))
    return charts


def content(text: str) -> Markup:
    """`text` escaped for an element's content (`&`, `<`, `>`), never an attribute's."""
    from markupsafe import Markup

    return Markup(str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def render_page(pages: list[LogPage], command: str, version: str) -> Iterator[bytes]:
    """The whole page, in parts as the template makes them (a big page is never held
    whole)."""
    from jinja2 import Environment, PackageLoader

    environment = Environment(
        loader=PackageLoader("condense_cli.terminal", "page"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["content"] = content
    script = environment.loader.get_source(environment, "page.js")[0]  # type: ignore[union-attr]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    parts = environment.get_template("page.html.j2").generate(
        pages=pages,
        command=shown(command).replace("\n", " "),
        version=version,
        script=script,
        script_hash=f"sha256-{digest}",
    )
    buffer: list[str] = []
    size = 0
    for part in parts:
        buffer.append(part)
        size += len(part)
        if size >= 1 << 20:
            yield "".join(buffer).encode()
            buffer, size = [], 0
    yield "".join(buffer).encode()


def _in_view(line: Timeline) -> str:
    """The view's size as `view` says it: its events, a summary among them."""
    events = len(line.in_view) + line.summaries
    if not line.summaries:
        return f"{events:,}"
    return f"{events:,} ({plural(line.summaries, 'summary', 'summaries')} among them)"


def _counted_by(unit: str) -> str:
    """What a client's threshold in `unit` counts, beside a series condense counted."""
    return (
        " as the client counts them (its usage), not as the chart does" if unit == "tokens" else ""
    )
