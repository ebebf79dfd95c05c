"""`simulate --compare` as a table for people, and as CSV."""

from __future__ import annotations

import csv
import io

from condense_cli.condensers.compare import Standing
from condense_cli.core.text import plural, sanitize
from condense_cli.terminal.analysis_text import table
from condense_cli.terminal.dollars import dollars

HEAD = (
    "",
    "configuration",
    "calls",
    "tokens sent",
    "from cache",
    "condensations",
    "summariser tokens",
    "facts kept",
    "dollars",
    "against none",
)


def _share(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "-"


def _cells(rank: int, row: Standing) -> list[str]:
    whole = row.priced == row.logs
    spent = dollars(row.dollars, not whole) if row.priced else "$?"
    change = row.uncondensed - row.dollars
    against = (
        f"{dollars(abs(change))} {'saved' if change >= 0 else 'more'}"
        if whole and row.priced
        else "?"
    )
    return [
        f"{rank}.",
        sanitize(row.label, one_line=True),
        f"{row.calls:,}",
        f"{row.prompt:,}",
        _share(row.cached_share),
        f"{row.condensations:,}",
        f"{row.summariser_tokens:,}",
        f"{_share(row.kept_share)} of {row.facts:,}",
        spent,
        against,
    ]


def compare_text(rows: list[Standing], logs: int, placeholder: int | None) -> str:
    """The configurations ranked, and what the figures are."""
    lines = [
        f"simulate --compare: {plural(len(rows), 'configuration')} over {plural(logs, 'log')}, "
        "cheapest first",
        *table([list(HEAD), *(_cells(n, row) for n, row in enumerate(rows, start=1))]),
        "calls: the agent's, one at each turn of the logs, each sending the view then; "
        "from cache: the share of their tokens the prompt cache served",
        "facts kept: of the facts of the histories (as `audit` finds them), those the final "
        "view holds in its summaries or its events"
        + (
            f"; the summaries are placeholders of {placeholder:,} tokens, which hold none "
            "(--call-model asks the model)"
            if placeholder is not None
            else ""
        ),
        "dollars: the agent's calls and the summariser's, at each log's model's rates; "
        "against none: the same histories with no condensation",
    ]
    unpriced = sorted(set().union(*(row.unpriced for row in rows)))
    if unpriced:
        lines.append(
            f"+? no price for {', '.join(unpriced)}: the dollars are those of the other "
            "logs (--prices takes yours), and the rows are ranked by the tokens sent, the "
            "summariser's included"
        )
    return "\n".join(lines) + "\n"


def compare_csv(rows: list[Standing]) -> str:
    """A row per configuration, ranked, with the figures of `Standing.to_json`."""
    out = io.StringIO()
    data = [row.to_json() for row in rows]
    keys = [key for key in data[0] if key != "unpriced_models"] if data else []
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["rank", *keys, "unpriced_models"])
    for rank, row in enumerate(data, start=1):
        cells = ["" if row[key] is None else row[key] for key in keys]
        writer.writerow([rank, *cells, " ".join(row.get("unpriced_models", []))])
    return out.getvalue()
