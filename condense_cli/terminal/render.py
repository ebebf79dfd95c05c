"""Output: rich blocks for people on a terminal, plain text when piped, exact JSON for scripts.

Event text is untrusted (command output, web pages): it is always rendered as
`rich.text.Text` (never parsed as markup) and passed through `text.sanitize`, so it
cannot move the cursor, clear the screen, set the clipboard or reorder what is shown.

rich is imported only by what draws with it (`print_rich`, `print_stats`): plain
text and JSON leave it out, as it takes ~30 ms to import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import IO, TYPE_CHECKING, Any

import orjson

from condense_cli.core.events import Event, View
from condense_cli.core.intervals import format_runs
from condense_cli.core.redact import mask
from condense_cli.core.text import plural, sanitize
from condense_cli.dialects.base import Gap, Replay
from condense_cli.terminal.dollars import weighed_line

if TYPE_CHECKING:
    from rich.console import Console

    from condense_cli.dialects.reports import CondensationRow, StatsReport

PREVIEW_LINES = 6
PREVIEW_CHARS = 600

__all__ = ["sanitize"]  # the one rule for untrusted text, re-exported for callers of render


def preview(text: str, full: bool = False) -> str:
    """The first lines of `text` (what looks like a secret masked), cut to a readable
    size unless `full`."""
    text = text.strip()
    if full:
        return sanitize(mask(text))
    # masked before it is cut, with room past the cut for a secret that spans it
    whole = len(text)
    text = sanitize(mask(text[: PREVIEW_CHARS + MASK_MARGIN]))
    lines = text.splitlines()
    cut = "\n".join(lines[:PREVIEW_LINES])
    if len(cut) > PREVIEW_CHARS:
        cut = cut[:PREVIEW_CHARS]
    if cut != text or whole > PREVIEW_CHARS + MASK_MARGIN:
        cut += f" … [{whole:,} chars]"
    return cut


MASK_MARGIN = 1_000


def heading(event: Event, ids: dict[int, object] | None = None) -> str:
    """`#12 agent run` style label of an event; `ids` maps keys to the ids shown."""
    label = f"#{event.id}" if event.id is not None else "#-"
    parts = [label, event.source or "-", f"{event.kind}:{event.type}"]
    if event.cause is not None:
        cause = ids.get(event.cause, event.cause) if ids else event.cause
        parts.append(f"(answers #{cause})")
    return sanitize(" ".join(parts), one_line=True)


def shown_ids(view: View) -> dict[int, object]:
    """Each event's key -> the id it is shown with (they differ where keys are positions)."""
    return {e.key: e.id for e in view if e.key is not None}


def header_line(view: View, replay: Replay, title: str) -> str:
    """One line that says what the view holds, and which dialect the log is in."""
    parts = [
        f"{plural(len(view), 'event')} in view",
        f"{replay.forgotten_events:,} forgotten",
        plural(len(replay.condensations), "condensation"),
    ]
    summaries = [i for i, event in enumerate(view) if event.is_summary]
    if len(summaries) == 1:
        parts.append(f"summary at {summaries[0]}")
    elif summaries:
        parts.append(f"{len(summaries)} summaries")
    if view.unhandled_request:
        parts.append("condensation request pending")
    generation = f", {replay.generation}" if replay.generation else ""
    name = sanitize(title, one_line=True)
    return f"{name} ({replay.dialect}{generation}): " + ", ".join(parts)


def _event_body(event: Event, full: bool) -> str:
    body = preview(event.text, full)
    thought = event.thought
    if thought:
        body = f"(thought) {preview(thought, full)}\n{body}" if body else preview(thought, full)
    return body


SOURCE_STYLES = {"user": "magenta", "agent": "cyan", "environment": "green"}
MARKER_STYLE = "dim italic"


def gap_line(gap: Gap) -> str:
    """`⋯ 14 events forgotten (ids 2..15) by condensation 17 ⋯`."""
    ids = (
        f"id {gap.first_id}"
        if gap.first_id == gap.last_id
        else f"ids {gap.first_id}..{gap.last_id}"
    )
    by = f" by condensation {gap.by}" if gap.by is not None else ""
    return f"⋯ {plural(gap.count, 'event')} forgotten ({ids}){by} ⋯"


def _with_gaps(view: View, gaps: list[Gap]) -> Iterable[Event | Gap]:
    """The view's events with each forgotten stretch where it was: before the next
    kept event, and before a summary that took its place."""
    pending = iter(gaps)
    gap = next(pending, None)
    kept = 0
    for event in view:
        while gap is not None and gap.after <= kept:
            yield gap
            gap = next(pending, None)
        yield event
        if event is not view.summary:
            kept += 1
    while gap is not None:
        yield gap
        gap = next(pending, None)


def write_plain(
    view: View, out: IO[str], header: str, full: bool = False, gaps: list[Gap] | None = None
) -> None:
    """The view as plain text: no colour, no box drawing, easy to grep."""
    out.write(header + "\n")
    ids = shown_ids(view)
    for item in _with_gaps(view, gaps or []):
        if isinstance(item, Gap):
            out.write(f"\n{gap_line(item)}\n")
            continue
        if item.is_summary:
            out.write("\n=== summary ===\n")
            out.write(_indent(preview(item.text, full)) + "\n")
            out.write("=== end of summary ===\n")
            continue
        out.write("\n" + heading(item, ids) + "\n")
        body = _event_body(item, full)
        if body:
            out.write(_indent(body) + "\n")


def print_rich(
    view: View,
    console: Console,
    header: str,
    full: bool = False,
    gaps: list[Gap] | None = None,
) -> None:
    """The view as coloured blocks for a terminal: the header wrapped, not cut;
    user, agent and environment in their own colours; bodies indented, wrapped
    lines included; a marker where events were forgotten."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.text import Text

    console.print(Text(header, style="bold"))
    console.rule(style="dim")
    ids = shown_ids(view)
    for item in _with_gaps(view, gaps or []):
        if isinstance(item, Gap):
            console.print(Text(gap_line(item), style=MARKER_STYLE), justify="center")
            continue
        if item.is_summary:
            console.print(
                Panel(
                    Text(preview(item.text, full)),
                    title="summary",
                    title_align="left",
                    border_style="yellow",
                )
            )
            continue
        colour = SOURCE_STYLES.get(item.source, "white")
        style = f"bold {colour}" if item.is_action else colour
        block: list[Any] = [Text(heading(item, ids), style=style)]
        body = _event_body(item, full)
        if body:
            block.append(Padding(Text(body, style="default"), (0, 0, 0, 4)))
        console.print(Group(*block))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def view_json(view: View, replay: Replay) -> bytes:
    """`{"dialect", "events": [...], "summary", "unhandled_condensation_request", "forgotten"}`,
    with `"generation": {"name", "reason"}` after the dialect when the replay names one.

    Kept events are spliced in as the bytes of their log lines.
    """
    return b"".join(view_json_pieces(view, replay))


def view_json_pieces(view: View, replay: Replay) -> Iterator[bytes]:
    """`view_json` in pieces, an event at a time: the document is never whole."""
    summary = view.summary or next((e for e in view if e.is_summary), None)
    first: dict[str, Any] = {"dialect": replay.dialect}
    if replay.generation is not None:
        first["generation"] = {"name": replay.generation, "reason": replay.generation_reason}
    yield orjson.dumps(first)[:-1] + b',"events":['
    comma = b""
    for event in view:
        yield comma + event.to_json()
        comma = b","
    tail = orjson.dumps(
        {
            "summary": summary.text if summary is not None else None,
            "unhandled_condensation_request": view.unhandled_request,
            "forgotten": replay.forgotten_events,
        }
    )
    yield b"]," + tail[1:]


def write_jsonl(bodies: Iterable[bytes], out: IO[bytes]) -> None:
    """Write JSON line bodies, one per line, as they come."""
    for body in bodies:
        out.write(body)
        out.write(b"\n")


def print_stats(report: StatsReport, console: Console) -> None:
    """`condense stats` as tables: boxes and colour on a terminal; otherwise plain
    aligned columns, no box drawing, no trailing blanks (SPEC section 5)."""
    from rich.text import Text

    if console.is_terminal:
        for part in _stats_parts(report, plain=False):
            console.print(part, soft_wrap=isinstance(part, Text))
        return
    with console.capture() as captured:
        for part in _stats_parts(report, plain=True):
            console.print(part, soft_wrap=isinstance(part, Text))
            console.print()
    lines = [line.rstrip() for line in captured.get().splitlines()]
    console.file.write("\n".join(lines).rstrip("\n") + "\n")


def _stats_parts(report: StatsReport, plain: bool) -> list[Any]:
    from functools import partial

    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    new_table: Callable[..., Table] = Table
    if plain:
        new_table = partial(Table, box=None, pad_edge=False, title_style="", header_style="")
    parts: list[Any] = []
    chars, tokens = report.chars, report.tokens
    title = sanitize(report.log, one_line=True)
    summary = new_table(title=None if plain else title, show_header=True, title_justify="left")
    summary.add_column("")
    summary.add_column("full log", justify="right")
    summary.add_column("view", justify="right")
    summary.add_column("view / log", justify="right")
    seen, kept = report.visible_events, report.view_events
    summary.add_row("events", f"{seen:,}", f"{kept:,}", _percent(kept, seen))
    summary.add_row(
        "characters", f"{chars.log:,}", f"{chars.view:,}", _percent(chars.view, chars.log)
    )
    if tokens is not None:
        summary.add_row(
            "tokens counted",
            f"{tokens.log:,}",
            f"{tokens.view:,}",
            _percent(tokens.view, tokens.log),
        )
    parts.append(Group(Text(title), summary) if plain else summary)
    facts = [
        f"{plural(report.events, 'record')} and {plural(report.bytes, 'byte')} in the log",
        f"{plural(report.forgotten_events, 'event')} forgotten",
        plural(len(report.condensations), "condensation"),
        plural(report.requests, "request") + (" (one pending)" if report.unhandled_request else ""),
    ]
    if tokens is not None:
        facts.append(f"tokens counted by {tokens.tokenizer}")
    if report.generation is not None:
        name, reason = report.generation
        facts.append(f"replayed as the {name} showed it ({reason})")
    parts.append(Text(sanitize("; ".join(facts), one_line=True)))
    if report.messages is not None:
        parts.append(Text(sanitize(_messages_line(report.messages), one_line=True)))
    kinds = new_table(title="by type", title_justify="left")
    for column in ("type", "records", "bytes"):
        kinds.add_column(column, justify="left" if column == "type" else "right")
    for name, slot in report.by_type.items():
        kinds.add_row(
            Text(sanitize(name, one_line=True)), f"{slot['events']:,}", f"{slot['bytes']:,}"
        )
    parts.append(kinds)
    rows = report.condensations
    if rows:
        table = new_table(title="condensations", title_justify="left")
        says = any(c.log_says for c in rows)
        fired = any(c.threshold for c in rows)
        columns = ("id", "line", "forgot", "ids", "summary chars", "view after")
        extras = (("the log says",) if says else ()) + (
            ("fired against the threshold",) if fired else ()
        )
        for column in columns + extras:
            table.add_column(
                column, justify="right" if column in columns[:3] + columns[4:] else "left"
            )
        for c in rows[-20:]:
            row = [
                str(c.id),
                str(c.line),
                f"{c.forgotten_events:,}",
                format_runs(c.forgotten_ranges, 4),
                "-" if c.summary_chars is None else f"{c.summary_chars:,}",
                f"{c.view_size_after:,}",
            ]
            if says:
                said = ", ".join(f"{k} {v}" for k, v in (c.log_says or {}).items())
                row.append(sanitize(said, one_line=True))
            if fired:
                row.append(c.threshold.describe() if c.threshold else "-")
            table.add_row(*row)
        if len(rows) > 20:
            table.caption = f"the last 20 of {len(rows):,}"
        parts.append(table)
        if any(c.log is not None for c in rows):
            parts.append(_own_figures(rows[-20:], new_table))
        sources = dict.fromkeys(c.threshold.source for c in rows if c.threshold is not None)
        for source in sources:
            parts.append(Text(sanitize(f"threshold: {source}", one_line=True)))
        if not sources:
            unknown = "threshold: not known from the log"
            parts.append(Text(f"{unknown} (give the agent's settings with --client-config)"))
        if report.economics is not None:
            weighed_count = report.economics.compactions
            whose = (
                "the compaction's" if weighed_count == 1 else f"the {weighed_count:,} compactions'"
            )
            said = f"{whose} {weighed_line(report.economics)}"
            parts.append(Text(sanitize(said, one_line=True)))
    if report.client is not None:
        parts += _client_parts(report.client, new_table)
    for finding in report.thrash or ():
        parts.append(Text(sanitize(f"thrash at line {finding['lines'][0]}: {finding['says']}")))
    return parts


def _client_parts(client: dict[str, Any], Table: Any) -> list[Any]:
    """What the client does beyond the view: microcompactions, compaction on resume."""
    from rich.text import Text

    parts: list[Any] = []
    micro = client.get("microcompactions") or []
    if micro:
        table = Table(
            title="microcompactions by an older client (not redone on resume)",
            title_justify="left",
        )
        columns = ("line", "trigger", "tokens before", "tokens saved", "tool results")
        for column in columns:
            table.add_column(column, justify="left" if column == "trigger" else "right")
        for m in micro:
            figures = (m["line"], m["pre_tokens"], m["tokens_saved"], m["tool_results"])
            line, pre, saved, results = ("-" if x is None else f"{x:,}" for x in figures)
            table.add_row(
                line, sanitize(str(m["trigger"] or "-"), one_line=True), pre, saved, results
            )
        parts.append(table)
    compaction = client.get("resume_compaction")
    if compaction is not None:
        parts.append(Text(sanitize(compaction["says"], one_line=True)))
    return parts


def _messages_line(messages: dict[str, Any]) -> str:
    """`the model reads 12 messages: 3,456 tokens (...); the conversion dropped ...`."""
    tokens = messages["tokens"]
    counted = f": {tokens:,} tokens as litellm counts them" if tokens is not None else ""
    line = (
        f"the model reads {plural(messages['count'], 'message')}{counted} "
        f"({messages['chars']:,} characters; tool schemas not counted)"
    )
    changes = []
    for what, key, noun in (
        ("dropped", "dropped", "event"),
        ("put in", "inserted", "message"),
        ("approximated", "approximated", "message"),
    ):
        if messages[key]:
            kinds = sorted({c["kind"] for c in messages[key]} - {"approximated"})
            why = f" ({', '.join(kinds)})" if kinds else ""
            changes.append(f"{what} {plural(len(messages[key]), noun)}{why}")
    if changes:
        line += "; the conversion " + ", ".join(changes)
    return line


def _own_figures(condensations: list[CondensationRow], Table: Any) -> Any:
    """The log's own figures for each compaction (Claude Code's `compactMetadata`)
    beside condense's counts of the view before and after it."""
    table = Table(title="the log's figures beside condense's", title_justify="left")
    columns = ["line", "trigger", "log tokens", "log ms", "view events", "view tokens"]
    for column in columns:
        table.add_column(column, justify="left" if column == "trigger" else "right")
    for c in condensations:
        log = c.log or {}
        table.add_row(
            str(c.line),
            sanitize(str(log.get("trigger") or "-"), one_line=True),
            _change(log.get("pre_tokens"), log.get("post_tokens")),
            _count(log.get("duration_ms")),
            _change(c.view_size_before, c.view_size_after),
            _change(c.tokens_before, c.tokens_after),
        )
    return table


def _change(before: Any, after: Any) -> str:
    return f"{_count(before)} -> {_count(after)}"


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def _percent(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"
