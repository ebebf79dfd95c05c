"""`condense cost` as a table for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from condense_cli.core.text import sanitize
from condense_cli.terminal.analysis_text import table

if TYPE_CHECKING:
    from condense_cli.analysis.cost import Spend

HEAD = ("calls", "input", "output", "cache write", "cache read", "tokens", "dollars")


def _cells(spend: Spend) -> list[str]:
    numbers = (
        spend.calls,
        spend.input,
        spend.output,
        spend.cache_write,
        spend.cache_read,
        spend.tokens,
    )
    dollars = f"${spend.dollars:,.2f}" + ("*" if spend.recorded else "")
    dollars += " +?" if spend.unpriced else ""
    return [*(f"{n:,}" for n in numbers), dollars]


def cost_table(by: str, rows: dict[str, Spend], totals: Spend | None) -> str:
    """The rows and their total; a model with no price named under them."""
    if totals is None:
        return "no model call in the sessions (or in the days asked for)\n"
    lines = table(
        [
            [by, *HEAD],
            *([sanitize(k, one_line=True), *_cells(v)] for k, v in rows.items()),
            ["all", *_cells(totals)],
        ]
    )
    if totals.recorded:
        lines.append(
            f"* {totals.recorded:,} calls priced at the dollars their log records: LiteLLM's "
            "table has no price for their model"
        )
    if totals.unpriced:
        names = ", ".join(sorted(totals.unpriced))
        lines.append(
            f"+? no price in LiteLLM's table for {names}: their tokens are counted, "
            "not their dollars"
        )
    return "\n".join(lines) + "\n"
