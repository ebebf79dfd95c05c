"""Plain-text reports of `audit`, `simulate` and `diff`: tables and a terminal chart.

Plain text, the same on a terminal and in a pipe, so that tests and READMEs show
exactly what a user sees.
"""

from __future__ import annotations

from collections.abc import Sequence

from condense_cli.audit import Audit, LogAudit, Tally, total
from condense_cli.facts import KINDS
from condense_cli.text import plural, sanitize


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
        lines += [sanitize(f"    {kind}: {text}", one_line=True) for kind, text in lost]
    return lines


def audit_text(audit: LogAudit) -> str:
    """The whole audit: each condensation, the current view, and the totals."""
    count = len(audit.condensations)
    lines = [sanitize(f"audit of {audit.path} ({audit.dialect}): {plural(count, 'condensation')}")]
    for item in audit.condensations:
        where = f"id {item.id}" + (f", line {item.line}" if item.line != item.id else "")
        said = (
            f"summary of {item.summary_chars:,} chars"
            if item.summary_chars is not None
            else "no summary"
        )
        title = f"{item.label} ({where}): forgot {plural(item.forgotten_events, 'event')}, {said}"
        lines += ["", *_audit_block(item, sanitize(title, one_line=True))]
    current = audit.current
    said = (
        f"summaries of {current.summary_chars:,} chars"
        if current.summary_chars is not None
        else "no summary"
    )
    title = (
        f"current view: {plural(current.forgotten_events, 'event')} forgotten in all, {said}; "
        "every forgotten fact looked up in it"
    )
    lines += ["", *_audit_block(current, title)]
    if count:
        lines += ["", f"overall ({plural(count, 'condensation')}):", *kinds_table(audit.overall)]
    return "\n".join(lines) + "\n"


def audits_text(audits: list[LogAudit], overall: dict[str, Tally]) -> str:
    """Several logs: each audit, then every condensation of every log together."""
    parts = [audit_text(audit) for audit in audits]
    count = sum(len(a.condensations) for a in audits)
    if len(audits) > 1:
        title = f"all {len(audits)} logs ({plural(count, 'condensation')}):"
        parts.append("\n".join([title, *kinds_table(overall)]) + "\n")
    return "\n".join(parts)
