"""Several logs in one table: a row per log and the totals, as text (aligned
columns), JSON (one object), JSONL (a line per log, then the totals) or CSV.

Rows come in the order of the logs, written as they come where the format allows;
totals add every number column up."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from condense_cli.analysis.audit import LogAudit, total
from condense_cli.analysis.facts import KINDS
from condense_cli.core.text import plural, sanitize
from condense_cli.dialects.reports import StatsReport

# The columns of `stats` over many logs: (key, heading of the text table).
STATS_COLUMNS = (
    ("log", "log"),
    ("dialect", "dialect"),
    ("model", "model"),
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
    ("compactions_net_dollars", "compactions net $"),
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
        "model": report.model,
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
        "compactions_net_dollars": _net(report),
    }


def _net(report: StatsReport) -> float | None:
    """What the log's compactions saved less what they cost, in dollars; None where
    one is not weighed or not priced."""
    figures = report.economics
    weighed = [c for c in report.condensations if c.economics is not None]
    if figures is None or figures.unmeasured or figures.unpriced:
        return None
    if len(weighed) < len(report.condensations):
        return None
    return round(figures.net_dollars, 6)


# The columns of `audit` over many logs: the facts lost, per kind, of every compaction.
AUDIT_COLUMNS = (
    ("log", "log"),
    ("dialect", "dialect"),
    ("model", "model"),
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
        "model": audit.model,
        "condensations": len(audit.condensations),
        "forgotten": sum(a.forgotten_events for a in audit.condensations),
        "facts": whole.facts,
        "lost": whole.facts - whole.kept,
    }
    row |= {f"{kind}_lost": overall[kind].facts - overall[kind].kept for kind in KINDS}
    return row


LABELS = ("log", "dialect", "model")  # the columns that name, not count


class Sums:
    """Rows added up as they come: every number column summed (None where no row has
    the number), and the names each labelling column took."""

    def __init__(self) -> None:
        self.logs = 0
        self.numbers: dict[str, float | None] = {}  # ints, but dollars
        self.names: dict[str, set[str]] = {key: set() for key in LABELS[1:]}

    def add(self, row: dict[str, Any]) -> None:
        self.logs += row.get("logs", 1)  # a group's row stands for its logs
        for key, value in row.items():
            if key in self.names:
                if value:
                    self.names[key].update(str(value).split(", "))
            elif key not in LABELS and key != "logs":
                known = self.numbers.get(key)
                if isinstance(value, int | float):
                    self.numbers[key] = (known or 0) + value
                else:
                    self.numbers.setdefault(key, None)

    def row(self, label: str | None = None) -> dict[str, Any]:
        """The totals; with `label`, a group's row (its names, its number of logs)."""
        numbers = {k: round(v, 6) if isinstance(v, float) else v for k, v in self.numbers.items()}
        if label is None:
            return {"log": plural(self.logs, "log"), "dialect": "", "model": ""} | numbers
        names = {key: ", ".join(sorted(values)) for key, values in self.names.items()}
        logs = f"{label} ({plural(self.logs, 'log')})"
        return {"log": logs, **names, **numbers, "logs": self.logs}


class Table:
    """A table over many logs, written as rows come: a JSONL or CSV row at once; text
    and JSON (aligned widths, one document) and groups once every row is in. Memory
    holds the rows of text and JSON only, never the logs' reports.
    `group` names a row's group (`--group-by`): then a row per group."""

    def __init__(
        self,
        columns: Sequence[tuple[str, str]],
        format: str,
        write: Callable[[str], None],
        group: Callable[[dict[str, Any]], str] | None = None,
    ) -> None:
        self.columns, self.format, self.write, self.group = columns, format, write, group
        self.keys = [key for key, _ in columns]
        self.total = Sums()
        self.rows: list[dict[str, Any]] = []
        self.groups: dict[str, Sums] = {}
        if format == "csv":
            self.write(self._csv({k: k for k in self.keys}))

    def add(self, row: dict[str, Any]) -> None:
        if self.group is not None:
            self.groups.setdefault(self.group(row), Sums()).add(row)
            return
        self._row(row)

    def _row(self, row: dict[str, Any]) -> None:
        self.total.add(row)
        if self.format == "jsonl":
            self.write(orjson.dumps(row).decode() + "\n")
        elif self.format == "csv":
            self.write(self._csv(row))
        else:
            self.rows.append(row)

    def close(self) -> None:
        """Write the groups or the rows kept back, and the totals."""
        for label, sums in self.groups.items():
            self._row(sums.row(label))
        total = self.total.row()
        for key in self.keys:
            total.setdefault(key, None)
        if self.format == "jsonl":
            self.write(orjson.dumps({"total": total}).decode() + "\n")
        elif self.format == "csv":
            self.write(self._csv(total))
        elif self.format == "json":
            data = {"logs": self.rows, "total": total}
            self.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
        else:
            self.write(self._text(total))

    def _csv(self, row: dict[str, Any]) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(
            out, fieldnames=self.keys, lineterminator="\n", extrasaction="ignore"
        )
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in self.keys})
        return out.getvalue()

    def _text(self, total: dict[str, Any]) -> str:
        keys = self.keys
        cells = [[heading for _, heading in self.columns]]
        for row in [*self.rows, total]:
            cells.append([_cell(row.get(key)) for key in keys])
        widths = [max(len(line[i]) for line in cells) for i in range(len(keys))]
        names = sum(1 for key in keys if key in LABELS)
        text = []
        for n, line in enumerate(cells):
            if n == len(cells) - 1:
                text.append("  ".join("-" * w for w in widths))
            parts = [
                c.ljust(w) if i < names else c.rjust(w)
                for i, (c, w) in enumerate(zip(line, widths, strict=True))
            ]
            text.append("  ".join(parts).rstrip())
        return "\n".join(text) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return sanitize(str(value), one_line=True)
