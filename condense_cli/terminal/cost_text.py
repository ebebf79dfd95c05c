"""`condense cost` as a table for people."""

from __future__ import annotations

from typing import TYPE_CHECKING

from condense_cli.core.text import plural, sanitize
from condense_cli.terminal.analysis_text import table
from condense_cli.terminal.dollars import dollars, net, own_call

if TYPE_CHECKING:
    from condense_cli.analysis.cost import Spend
    from condense_cli.core.usage import Economics, Spending

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


def cost_table(by: str, rows: dict[str, Spend], totals: Spend) -> str:
    """The rows and their total; a model with no price named under them."""
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
    if totals.searches:
        lines.append(
            f"the dollars hold the {plural(totals.searches, 'web search', 'web searches')} "
            "the calls ran, at LiteLLM's price of a search"
        )
    return "\n".join(lines) + "\n"


def compaction_table(weighed: list[tuple[str, Spending]]) -> str:
    """Each compaction of the sessions: its own call, the cache it made the calls
    after it write again, what those calls did not send, and the net; then a line on
    how each is counted."""
    from condense_cli.analysis.economics import total, weigh

    rows, every = [], []
    for log, spending in weighed:
        for compaction, figures in zip(spending.compactions, weigh(spending), strict=True):
            every.append(figures)
            rows.append([sanitize(log, one_line=True), str(compaction.number), *_weighed(figures)])
    if not rows:
        return "no compaction in the sessions\n"
    whole: Economics = total(every)
    lines = table(
        [
            ["session", "compaction", "own call", "cache rewritten", "saved after", "net"],
            *rows,
            ["all", f"{whole.compactions:,}", *_weighed(whole)],
        ]
    )
    lines += [
        "own call: the summariser's, as the log records it (~ built from what the client "
        "says of it: Claude Code records no such call; - none recorded)",
        "cache rewritten: what the calls after it wrote to the prompt cache that they would "
        "have read from it; saved after: the tokens it took out, not sent by each call "
        "after it up to the next compaction (as cache reads where the calls use the cache)",
        "net: saved, less the cache rewritten and its own call; assumes the session went on "
        "as it did (? a compaction with no call before or after it to weigh it by)",
    ]
    if whole.unpriced:
        names = ", ".join(sorted(whole.unpriced))
        lines.append(f"+? no price for {names} (give your own with --prices)")
    return "\n".join(lines) + "\n"


def _weighed(figures: Economics) -> list[str]:
    unpriced = bool(figures.unpriced)
    own = own_call(figures).replace("not recorded", "-")
    if figures.unmeasured == figures.compactions:
        return [own, "?", "?", "?"]
    return [
        own,
        f"{figures.rewritten:,} tok, {dollars(figures.rewritten_dollars, unpriced)}",
        f"{figures.saved:,} tok, {dollars(figures.saved_dollars, unpriced)}",
        net(figures),
    ]
