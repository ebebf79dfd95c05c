"""Several logs in one table: a row per log and the totals, as text (aligned
columns), JSON (one object), JSONL (a line per log, then the totals) or CSV.

Rows come in the order of the logs; totals add every number column up."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

import orjson

from condense_cli.analysis.audit import LogAudit, total
from condense_cli.analysis.facts import KINDS
from condense_cli.core.text import sanitize
from condense_cli.dialects.base import StatsReport

# The columns of `stats` over many logs: (key, heading of the text table).
STATS_COLUMNS = (
    ("log", "log"),
    ("dialect", "dialect"),
    ("events", "events"),
    ("view_events", "in view"),
    ("forgotten", "forgotten"),
    ("condensations", "compactions"),
    ("log_chars", "log chars"),
    ("view_chars", "view chars"),
    ("log_tokens", "log tokens"),
    ("view_tokens", "view tokens"),
    ("saved", "saved"),
    ("thrash", "thrash"),
)


def stats_row(report: StatsReport) -> dict[str, Any]:
    """One log's numbers (`saved`: tokens, or characters without a tokenizer, the
    view does not hold)."""
    tokens = report.tokens
    saved = (
        (tokens.log - tokens.view) if tokens is not None else report.chars.log - report.chars.view
    )
    return {
        "log": report.log,
        "dialect": report.dialect,
        "events": report.visible_events,
        "view_events": report.view_events,
        "forgotten": report.forgotten_events,
        "condensations": len(report.condensations),
        "log_chars": report.chars.log,
        "view_chars": report.chars.view,
        "log_tokens": tokens.log if tokens is not None else None,
        "view_tokens": tokens.view if tokens is not None else None,
        "saved": saved,
        "thrash": len(report.thrash or ()),
    }


# The columns of `audit` over many logs: the facts lost, per kind, of every compaction.
AUDIT_COLUMNS = (
    ("log", "log"),
    ("dialect", "dialect"),
    ("condensations", "compactions"),
    ("forgotten", "forgotten"),
    ("facts", "facts"),
    ("lost", "lost"),
    *((f"{kind}_lost", kind) for kind in KINDS),
)


def audit_row(audit: LogAudit) -> dict[str, Any]:
    """One log's audit: its compactions and the facts they lost, per kind."""
    overall = audit.overall
    whole = total(overall)
    row: dict[str, Any] = {
        "log": audit.path,
        "dialect": audit.dialect,
        "condensations": len(audit.condensations),
        "forgotten": sum(a.forgotten_events for a in audit.condensations),
        "facts": whole.facts,
        "lost": whole.facts - whole.kept,
    }
    row |= {f"{kind}_lost": overall[kind].facts - overall[kind].kept for kind in KINDS}
    return row


def grouped(rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """One row per group (`keys[i]` is row i's), in the order groups first appear:
    the group in the `log` column with its number of logs, every number added up."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row, key in zip(rows, keys, strict=True):
        groups.setdefault(key, []).append(row)
    out = []
    for key, members in groups.items():
        row = totals(members, [(k, "") for k in members[0]])
        dialects = sorted({str(m["dialect"]) for m in members})
        label = {"log": f"{key} ({len(members):,} logs)", "dialect": ", ".join(dialects)}
        out.append(row | label | {"logs": len(members)})
    return out


def totals(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """Every number column added up (None where no row has the number)."""
    count = sum(r.get("logs", 1) for r in rows)  # a group's row stands for its logs
    total: dict[str, Any] = {"log": f"{count:,} logs", "dialect": ""}
    for key, _ in columns:
        if key in total or key == "logs":
            continue
        values = [r[key] for r in rows if isinstance(r.get(key), int)]
        total[key] = sum(values) if values else None
    return total


def render(rows: list[dict[str, Any]], columns: Sequence[tuple[str, str]], format: str) -> str:
    """The table in `format`: text, json, jsonl or csv."""
    total = totals(rows, columns)
    keys = [key for key, _ in columns]
    if format == "json":
        data = {"logs": rows, "total": total}
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    if format == "jsonl":
        lines = [orjson.dumps(r).decode() for r in rows]
        lines.append(orjson.dumps({"total": total}).decode())
        return "\n".join(lines) + "\n"
    if format == "csv":
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=keys, lineterminator="\n", extrasaction="ignore")
        writer.writeheader()
        for row in [*rows, total]:
            writer.writerow({k: "" if row.get(k) is None else row[k] for k in keys})
        return out.getvalue()
    cells = [[heading for _, heading in columns]]
    for row in [*rows, total]:
        cells.append([_cell(row.get(key)) for key in keys])
    widths = [max(len(line[i]) for line in cells) for i in range(len(keys))]
    text = []
    for n, line in enumerate(cells):
        if n == len(cells) - 1:
            text.append("  ".join("-" * w for w in widths))
        parts = [
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        ]
        text.append("  ".join(parts).rstrip())
    return "\n".join(text) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return sanitize(str(value), one_line=True)
