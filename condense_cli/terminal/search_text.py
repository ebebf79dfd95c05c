"""`condense search` as text for people: a hit a paragraph."""

from __future__ import annotations

from typing import TYPE_CHECKING

from condense_cli.core.text import plural, sanitize

if TYPE_CHECKING:
    from condense_cli.analysis.search import Hit


def hits_text(query: str, hits: list[Hit], logs: int, indexed: int, open_: bool) -> str:
    """The hits, best first: where each is, who wrote it, when, whether the view still
    holds it, and its snippet (with the command that shows it, under `open_`)."""
    asked, searched = sanitize(query, one_line=True), f"the {plural(logs, 'session')} searched"
    sessions = len({hit.log for hit in hits})
    where = f"{plural(sessions, 'session')} of {searched}" if logs > 1 else searched
    head = (
        f"{plural(len(hits), 'hit')} for {asked!r} in {where}"
        if hits
        else f"no hit for {asked!r} in {searched}"
    ) + (f" ({plural(indexed, 'session')} indexed now)" if indexed else "")
    lines = [head]
    for number, hit in enumerate(hits, start=1):
        row = hit.row
        state = (
            "in view"
            if not row.forgotten
            else "forgotten"
            if row.forgotten == "?"
            else f"forgotten by condensation {row.forgotten}"
        )
        when = f"  {row.when[:16].replace('T', ' ')}" if row.when else ""
        lines.append("")
        lines.append(
            sanitize(
                f"{number}. {hit.log} ({hit.dialect}, {hit.project})  #{row.id}  "
                f"{row.who}, {row.kind}{when}  [{state}]",
                one_line=True,
            )
        )
        lines.append("   " + sanitize(" ".join(hit.snippet.split()), one_line=True))
        if open_:
            lines.append("   " + sanitize(hit.command, one_line=True))
    return "\n".join(lines) + "\n"
