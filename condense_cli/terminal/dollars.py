"""Dollars as condense prints them, and what a compaction cost and saved in words:
the one form `cost`, `stats`, `audit` and `report` share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from condense_cli.core.text import plural

if TYPE_CHECKING:
    from condense_cli.core.usage import Economics


def dollars(value: float, unpriced: bool = False) -> str:
    """`$1,234.56` (`-$0.25`), and ` +?` after it where a model with no price is left
    out of it (`$?` when nothing at all was priced)."""
    if unpriced and not value:
        return "$?"
    sign = "-" if round(value, 2) < 0 else ""
    return f"{sign}${abs(value):,.2f}" + (" +?" if unpriced else "")


def own_call(figures: Economics) -> str:
    """The compactions' own calls in dollars (`~` where built from the client's own
    figures), or `not recorded`."""
    if not figures.own_calls:
        return "not recorded"
    mark = "~" if figures.own_estimated else ""
    return mark + dollars(figures.own_dollars, bool(figures.unpriced))


def net(figures: Economics) -> str:
    """What the compactions saved less what they cost, or `?` where no call around
    them weighs them."""
    if figures.unmeasured == figures.compactions:
        return "?"
    return dollars(figures.net_dollars, bool(figures.unpriced))


def weighed_line(figures: Economics) -> str:
    """`cost: its own call ~$0.26; ...`: what one compaction (or, in the plural, many)
    cost and saved."""
    unpriced = bool(figures.unpriced)
    its, it = ("its own call", "it") if figures.compactions == 1 else ("their own calls", "them")
    if figures.unmeasured == figures.compactions:
        said = f"cost: {its} {own_call(figures)}; no call before or after {it} to weigh the rest by"
    else:
        said = (
            f"cost: {its} {own_call(figures)}; the cache rewritten after {it} "
            f"{plural(figures.rewritten, 'token')} "
            f"({dollars(figures.rewritten_dollars, unpriced)}); "
            f"saved {plural(figures.saved, 'token')} ({dollars(figures.saved_dollars, unpriced)})"
            f" on the {plural(figures.calls_after, 'call')} after {it}; net {net(figures)}"
        )
        if figures.unmeasured:
            said += f" ({figures.unmeasured:,} with no call around to weigh by)"
    if unpriced:
        names = ", ".join(sorted(figures.unpriced))
        said += f" (+? LiteLLM's table has no price for {names}: `--prices` takes yours)"
    return said
