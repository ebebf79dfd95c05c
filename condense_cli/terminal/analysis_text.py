"""Plain-text reports of `audit`, `simulate` and `diff`: tables and a terminal chart.

Plain text, the same on a terminal and in a pipe, so that tests and READMEs show
exactly what a user sees.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from condense_cli.analysis.audit import Audit, LogAudit, Tally, total
from condense_cli.analysis.cost import served_said
from condense_cli.analysis.diff import ViewDiff, preview
from condense_cli.analysis.economics import RunCost
from condense_cli.analysis.facts import KINDS, Fact
from condense_cli.condensers.simulate import Priced, Run
from condense_cli.core.events import Event
from condense_cli.core.text import plural, sanitize
from condense_cli.terminal.dollars import dollars, weighed_line


def table(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Columns padded to their widest cell: the first left-aligned, the others right."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


# --- audit -----------------------------------------------------------------------------


def _from(fact: Fact) -> str:
    """` (#12)`: the event a user's clause is from."""
    return f" (#{fact.source})" if fact.source is not None else ""


AUDIT_HEAD = ("kind", "facts", "kept", "in summary", "in view", "lost", "kept %")


def _tally_row(name: str, tally: Tally) -> list[str]:
    share = tally.share
    return [
        name,
        f"{tally.facts:,}",
        f"{tally.kept:,}",
        f"{tally.in_summary:,}",
        f"{tally.in_view:,}",
        f"{tally.facts - tally.kept:,}",
        f"{share:.1f}" if share is not None else "-",
    ]


def kinds_table(kinds: dict[str, Tally]) -> list[str]:
    rows = [list(AUDIT_HEAD)] + [_tally_row(kind, kinds[kind]) for kind in KINDS]
    rows.append(_tally_row("all", total(kinds)))
    return table(rows)


def _audit_block(audit: Audit, title: str) -> list[str]:
    lines = [title, *kinds_table(audit.kinds)]
    lost = audit.lost()
    if lost:
        lines.append(f"  lost ({len(lost):,}):")
        lines += [sanitize(f"    {f.kind}: {f.text}{_from(f)}", one_line=True) for f in lost]
    return lines


def audit_text(audit: LogAudit) -> Iterator[str]:
    """The whole audit, a piece at a time (its head, each condensation, the current
    view, the totals), each piece ending in a newline."""
    count = len(audit.condensations)
    yield sanitize(f"audit of {audit.path} ({audit.dialect}): {plural(count, 'condensation')}")
    yield "\n"
    for item in audit.condensations:
        where = f"id {item.id}" + (f", line {item.line}" if item.line != item.id else "")
        said = (
            f"summary of {item.summary_chars:,} chars"
            if item.summary_chars is not None
            else "no summary"
        )
        title = f"{item.label} ({where}): forgot {plural(item.forgotten_events, 'event')}, {said}"
        if item.threshold is not None:
            title += f"; fired {item.threshold.describe()}"
        block = _audit_block(item, sanitize(title, one_line=True))
        if item.economics is not None:
            block.insert(1, f"  {weighed_line(item.economics)}")
        yield _block(block)
    current = audit.current
    if not count and not current.forgotten_events:
        yield _block(["nothing forgotten: every event is in the view, so no fact was lost"])
        return
    said = (
        f"summaries of {current.summary_chars:,} chars"
        if current.summary_chars is not None
        else "no summary"
    )
    title = (
        f"current view: {plural(current.forgotten_events, 'event')} forgotten in all, {said}; "
        "every forgotten fact looked up in it"
    )
    yield _block(_audit_block(current, title))
    if count:
        yield _block([f"overall ({plural(count, 'condensation')}):", *kinds_table(audit.overall)])


def _block(lines: list[str]) -> str:
    """Lines after an empty one, each ending in a newline."""
    return "\n" + "\n".join(lines) + "\n"


def audits_text(audits: list[LogAudit], overall: dict[str, Tally]) -> Iterator[str]:
    """Several logs, a piece at a time: each audit, then every condensation of every
    log together."""
    for number, audit in enumerate(audits):
        if number:
            yield "\n"
        yield from audit_text(audit)
    count = sum(len(a.condensations) for a in audits)
    if len(audits) > 1:
        title = f"all {len(audits)} logs ({plural(count, 'condensation')}):"
        yield "\n" + "\n".join([title, *kinds_table(overall)]) + "\n"


# --- diff ------------------------------------------------------------------------------


def _signed(value: int) -> str:
    return f"{value:+,}" if value else "±0"


def _event_line(mark: str, event: Event, tokens: int) -> str:
    who = "summary" if event.is_summary else f"{event.source or '-'} {event.kind}:{event.type}"
    return sanitize(
        f"  {mark} {event.id} {who} ({tokens:,} tokens): {preview(event)}", one_line=True
    )


def diff_text(path: str, dialect: str, diff: ViewDiff) -> str:
    a, b = diff.a, diff.b
    lines = [
        sanitize(f"diff of {path} ({dialect}): {a.label} -> {b.label}", one_line=True),
        f"  events: {a.events:,} -> {b.events:,}; tokens: {a.tokens:,} -> {b.tokens:,} "
        f"({_signed(b.tokens - a.tokens)})",
    ]
    for title, events, mark in (("left the view", diff.left, "-"), ("entered", diff.entered, "+")):
        lines.append(
            f"{title} ({plural(len(events), 'event')}, {diff.tokens_of(events):,} tokens):"
        )
        lines += [_event_line(mark, e, diff.tokens[id(e)]) for e in events]
    if diff.rewritten:
        delta = sum(diff.tokens[id(new)] - diff.tokens[id(old)] for old, new in diff.rewritten)
        lines.append(
            f"rewritten ({plural(len(diff.rewritten), 'event')}, {_signed(delta)} tokens):"
        )
        lines += [_event_line("~", new, diff.tokens[id(new)]) for _old, new in diff.rewritten]
    removed, added = diff.summaries_removed, diff.summaries_added
    if not removed and not added:
        said = "unchanged" if a.summaries else "none on either side"
    elif removed and added:
        said = f"changed ({_chars(removed)} -> {_chars(added)})"
    elif added:
        said = f"added ({_chars(added)})"
    else:
        said = f"removed ({_chars(removed)})"
    lines.append(f"summary: {said}")
    return "\n".join(lines) + "\n"


def _chars(texts: list[str]) -> str:
    return ", ".join(f"{len(t):,} chars" for t in texts)


# --- simulate --------------------------------------------------------------------------

CHART_WIDTH = 64
CHART_HEIGHT = 10


def _figure(values: dict[str, Any]) -> str:
    return f"{values['peak']:,} / {values['mean']:,.1f} / {values['final']:,}"


def simulate_text(
    path: str, dialect: str, steps: int, tokenizer: str, runs: list[Run], priced: Priced | None
) -> str:
    data = [run.to_dict(series=False) for run in runs]
    rows = [
        ["", *[d["label"] for d in data]],
        ["condensations", *[f"{d['condensations']:,}" for d in data]],
        ["first fired at step", *[f"{d['fired_at'][0]:,}" if d["fired_at"] else "-" for d in data]],
        ["view events peak / mean / final", *[_figure(d["view_events"]) for d in data]],
        ["view tokens peak / mean / final", *[_figure(d["view_tokens"]) for d in data]],
        ["tokens sent to the summariser", *[f"{d['summariser_tokens']:,}" for d in data]],
        ["cache busts", *[f"{d['cache_busts']:,}" for d in data]],
        ["events rewritten", *[f"{d['events_rewritten']:,}" for d in data]],
    ]
    notes = []
    if priced is not None:
        rows += _dollar_rows(priced)
        notes = ["dollars:", *(f"  {sanitize(n, one_line=True)}" for n in _priced_as(priced)), ""]
    else:
        notes = ["dollars: the log names no model to price its calls by", ""]
    head = sanitize(
        f"simulate {path} ({dialect}): {plural(steps, 'event')} as the agent saw them; "
        f"tokens: {tokenizer}",
        one_line=True,
    )
    return "\n".join([head, *table(rows), *notes, *chart(runs)]) + "\n"


def _dollar_rows(priced: Priced) -> list[list[str]]:
    """The runs' calls in tokens and dollars, and against no condensation."""
    costs, none = priced.runs, priced.uncondensed

    def cached(cost: RunCost) -> str:
        return f"{cost.cache_read / cost.prompt:.0%}" if cost.prompt else "-"

    def against(cost: RunCost) -> str:
        if cost.unpriced or none.unpriced:
            return "$?"
        change = none.total - cost.total
        return f"{dollars(abs(change))} {'saved' if change >= 0 else 'more'}"

    return [
        ["agent calls (the log's turns)", *[f"{c.calls:,}" for c in costs]],
        ["prompt tokens they sent", *[f"{c.prompt:,}" for c in costs]],
        ["of them read from the cache", *[cached(c) for c in costs]],
        ["summariser calls", *[f"{c.summariser_calls:,}" for c in costs]],
        ["dollars: agent", *[dollars(c.dollars, bool(c.unpriced)) for c in costs]],
        ["dollars: summariser", *[dollars(c.summariser_dollars, bool(c.unpriced)) for c in costs]],
        ["dollars: total", *[dollars(c.total, bool(c.unpriced)) for c in costs]],
        ["against no condensation", *[against(c) for c in costs]],
    ]


CACHE_SAID = {
    "none": "none",
    "reads": "reads, as OpenAI bills them",
    "writes": "writes and reads, as Anthropic bills them",
}


def _priced_as(priced: Priced) -> list[str]:
    """How the calls were priced, and the history with no condensation: a line each."""
    turns, none = priced.turns, priced.uncondensed
    steps = priced.runs[0].calls if priced.runs else 0
    if turns.recorded:
        calls = (
            f"a call at each of the agent's {plural(steps, 'turn')}, at {turns.model}'s "
            f"rates, as the log's {plural(turns.recorded, 'call')} of the agent were made: "
            f"each sends the view and {turns.overhead:,} tokens beyond it (what the first "
            f"call sent besides the view: tools, and instructions the log does not hold), "
            f"and the {turns.output:,} tokens they answered are spread over them"
        )
    else:
        calls = (
            f"a call at each of the agent's {plural(steps, 'turn')}, at {turns.model}'s "
            "rates; the log records none of the agent's calls, so each sends the view "
            "alone and no answer is counted"
        )
    unpriced = set().union(none.unpriced, *(c.unpriced for c in priced.runs))
    if turns.served:
        calls += f"; in {served_said(turns.served)}, as most of the log's were"
    cache = CACHE_SAID.get(turns.cache, turns.cache)
    if turns.model in unpriced and not turns.recorded:
        cache = "none counted (no rates of the model say how it caches)"
    said = [
        calls,
        f"prompt cache: {cache}" + (" (written for an hour)" if turns.hour else ""),
        f"with no condensation: {dollars(none.total, bool(none.unpriced))} "
        f"({none.prompt:,} prompt tokens)",
    ]
    if turns.spent is not None:
        spent = turns.spent
        others = spent.calls - turns.recorded
        among = f" ({turns.recorded:,} of the agent, {others:,} other)" if others else ""
        said.append(
            f"the log's own {plural(spent.calls, 'call')}{among}: "
            f"{dollars(spent.dollars, bool(spent.unpriced))}, as `cost` counts them"
        )
    summarisers = sorted({c.summariser_model for c in priced.runs if c.summariser_model})
    if summarisers:
        said.append(
            f"the summariser at the rates of {', '.join(summarisers)} (its config's [llm] "
            "model, else the agent's)"
        )
    if unpriced:
        said.append(f"$?: no price for {', '.join(sorted(unpriced))} (--prices takes yours)")
    return said


def chart(runs: list[Run], width: int = CHART_WIDTH, height: int = CHART_HEIGHT) -> list[str]:
    """View tokens over the steps, one mark per run (1, 2, ...; * for a single run)."""
    steps = max((len(run.tokens) for run in runs), default=0)
    if steps == 0:
        return ["view tokens: no step"]
    peak = max(max(run.tokens) for run in runs if run.tokens) or 1
    columns = min(width, steps)
    grid = [[" "] * columns for _ in range(height)]
    for number, run in enumerate(runs, start=1):
        mark = "*" if len(runs) == 1 else str(number % 10)
        for column in range(columns):
            start = column * steps // columns
            end = max(start + 1, (column + 1) * steps // columns)
            values = run.tokens[start:end]
            if values:
                row = round(max(values) / peak * (height - 1))
                grid[height - 1 - row][column] = mark
    label = f"{peak:,}"
    pad = len(label)
    lines = [f"view tokens after each step (peak {peak:,}):"]
    for index, cells in enumerate(grid):
        axis = label if index == 0 else ("0".rjust(pad) if index == height - 1 else " " * pad)
        lines.append(f"  {axis} |{''.join(cells)}".rstrip())
    lines.append(f"  {' ' * pad} +{'-' * columns}")
    lines.append(f"  {' ' * pad}  step 1{f'{steps:,}'.rjust(max(0, columns - 6))}")
    if len(runs) > 1:
        lines.append("  " + "   ".join(f"{i % 10} = {r.label}" for i, r in enumerate(runs, 1)))
    return [sanitize(line, one_line=True) for line in lines]


def simulate_csv(ids: list[object], runs: list[Run]) -> str:
    """One row per step: the event, then each run's view events, tokens and whether it
    condensed."""
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    header = ["step", "event"]
    for run in runs:
        header += [f"{run.label} events", f"{run.label} tokens", f"{run.label} condensed"]
    writer.writerow(header)
    fired = [set(run.fired) for run in runs]
    for step, event_id in enumerate(ids, start=1):
        row: list[object] = [step, event_id]
        for run, steps in zip(runs, fired, strict=True):
            row += [run.events[step - 1], run.tokens[step - 1], int(step in steps)]
        writer.writerow(row)
    return out.getvalue()
