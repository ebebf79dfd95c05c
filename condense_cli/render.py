"""Output: rich blocks for people on a terminal, plain text when piped, exact JSON for scripts.

Event text is untrusted (command output, web pages): it is always rendered as
`rich.text.Text` (never parsed as markup) with control characters made visible,
so it cannot move the cursor, clear the screen or set the clipboard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import IO, Any

import orjson
from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from condense_cli.dialects.base import Replay
from condense_cli.intervals import format_runs
from condense_cli.model import Event, View

PREVIEW_LINES = 6
PREVIEW_CHARS = 600

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def sanitize(text: str) -> str:
    """Make control characters visible (`\\x1b`), keeping newlines and tabs."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def preview(text: str, full: bool = False) -> str:
    """The first lines of `text`, cut to a readable size unless `full`."""
    text = sanitize(text.strip())
    if full:
        return text
    lines = text.splitlines()
    cut = "\n".join(lines[:PREVIEW_LINES])
    if len(cut) > PREVIEW_CHARS:
        cut = cut[:PREVIEW_CHARS]
    if cut != text:
        cut += f" … [{len(text):,} chars]"
    return cut


def heading(event: Event) -> str:
    """`#12 agent run` style label of an event."""
    label = f"#{event.id}" if event.id is not None else "#-"
    parts = [label, event.source or "-", f"{event.kind}:{event.type}"]
    if event.cause is not None:
        parts.append(f"(answers #{event.cause})")
    return sanitize(" ".join(parts))


def header_line(view: View, replay: Replay, title: str) -> str:
    """One line that says what the view holds, and which dialect the log is in."""
    parts = [
        f"{len(view)} events in view",
        f"{replay.forgotten_events} forgotten",
        f"{len(replay.condensations)} condensations",
    ]
    summaries = [i for i, event in enumerate(view) if event.is_summary]
    if len(summaries) == 1:
        parts.append(f"summary at {summaries[0]}")
    elif summaries:
        parts.append(f"{len(summaries)} summaries")
    if view.unhandled_request:
        parts.append("condensation request pending")
    generation = f", {replay.generation}" if replay.generation else ""
    return f"{sanitize(title)} ({replay.dialect}{generation}): " + ", ".join(parts)


def _event_body(event: Event, full: bool) -> str:
    body = preview(event.text, full)
    thought = event.thought
    if thought:
        body = f"(thought) {preview(thought, full)}\n{body}" if body else preview(thought, full)
    return body


def write_plain(view: View, out: IO[str], header: str, full: bool = False) -> None:
    """The view as plain text: no colour, no box drawing, easy to grep."""
    out.write(header + "\n")
    for event in view:
        if event.is_summary:
            out.write("\n=== summary ===\n")
            out.write(_indent(preview(event.text, full)) + "\n")
            out.write("=== end of summary ===\n")
            continue
        out.write("\n" + heading(event) + "\n")
        body = _event_body(event, full)
        if body:
            out.write(_indent(body) + "\n")


def print_rich(view: View, console: Console, header: str, full: bool = False) -> None:
    """The view as coloured blocks for a terminal."""
    console.rule(Text(header, style="bold"))
    for event in view:
        if event.is_summary:
            console.print(
                Panel(
                    Text(preview(event.text, full)),
                    title="summary",
                    title_align="left",
                    border_style="yellow",
                )
            )
            continue
        style = "cyan" if event.is_action else "green"
        block = [Text(heading(event), style=f"bold {style}")]
        body = _event_body(event, full)
        if body:
            block.append(Text(_indent(body), style="default"))
        console.print(Group(*block))


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def view_json(view: View, replay: Replay) -> bytes:
    """`{"dialect", "events": [...], "summary", "unhandled_condensation_request", "forgotten"}`,
    with `"generation": {"name", "reason"}` after the dialect when the replay names one.

    Kept events are spliced in as the bytes of their log lines.
    """
    summary = view.summary or next((e for e in view if e.is_summary), None)
    events = b",".join(event.to_json() for event in view)
    first: dict[str, Any] = {"dialect": replay.dialect}
    if replay.generation is not None:
        first["generation"] = {"name": replay.generation, "reason": replay.generation_reason}
    head = orjson.dumps(first)
    tail = orjson.dumps(
        {
            "summary": summary.text if summary is not None else None,
            "unhandled_condensation_request": view.unhandled_request,
            "forgotten": replay.forgotten_events,
        }
    )
    return head[:-1] + b',"events":[' + events + b"]," + tail[1:]


def write_jsonl(bodies: Iterable[bytes], out: IO[bytes]) -> None:
    """Write JSON line bodies, one per line, as they come."""
    for body in bodies:
        out.write(body)
        out.write(b"\n")


def print_stats(numbers: dict[str, Any], console: Console) -> None:
    """`condense stats` as rich tables."""
    from rich.table import Table

    chars, tokens, view = numbers["chars"], numbers["tokens"], numbers["view"]
    summary = Table(title=sanitize(numbers["log"]), show_header=True, title_justify="left")
    summary.add_column("")
    summary.add_column("full log", justify="right")
    summary.add_column("view", justify="right")
    summary.add_column("view / log", justify="right")
    seen = numbers["visible_events"]
    summary.add_row("events", f"{seen:,}", f"{view['events']:,}", _percent(view["events"], seen))
    summary.add_row(
        "characters",
        f"{chars['log']:,}",
        f"{chars['view']:,}",
        _percent(chars["view"], chars["log"]),
    )
    if tokens is not None:
        summary.add_row(
            "tokens",
            f"{tokens['log']:,}",
            f"{tokens['view']:,}",
            _percent(tokens["view"], tokens["log"]),
        )
    console.print(summary)
    facts = [
        f"{numbers['events']:,} events and {numbers['bytes']:,} bytes in the log",
        f"{view['forgotten_events']:,} events forgotten",
        f"{len(numbers['condensations']):,} condensations",
        f"{numbers['requests']:,} requests"
        + (" (one pending)" if numbers["unhandled_request"] else ""),
    ]
    if tokens is not None:
        facts.append(f"tokens by {tokens['tokenizer']}")
    generation = numbers.get("generation")
    if generation:
        facts.append(f"replayed as the {generation['name']} showed it ({generation['reason']})")
    console.print(Text(sanitize("; ".join(facts))), soft_wrap=True)
    kinds = Table(title="by type", title_justify="left")
    for column in ("type", "events", "bytes"):
        kinds.add_column(column, justify="left" if column == "type" else "right")
    for name, slot in numbers["by_type"].items():
        kinds.add_row(Text(sanitize(name)), f"{slot['events']:,}", f"{slot['bytes']:,}")
    console.print(kinds)
    if numbers["condensations"]:
        table = Table(title="condensations", title_justify="left")
        for column in ("id", "line", "forgot", "ids", "summary chars", "view after"):
            table.add_column(column, justify="right" if column != "ids" else "left")
        for c in numbers["condensations"][-20:]:
            ids = format_runs(c["forgotten_ranges"], 4)
            table.add_row(
                str(c["id"]),
                str(c["line"]),
                f"{c['forgotten_events']:,}",
                ids,
                "-" if c["summary_chars"] is None else f"{c['summary_chars']:,}",
                f"{c['view_size_after']:,}",
            )
        if len(numbers["condensations"]) > 20:
            table.caption = f"the last 20 of {len(numbers['condensations']):,}"
        console.print(table)


def _percent(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"
