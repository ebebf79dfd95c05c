"""What model calls cost, in dollars: LiteLLM's price table, read offline (the copy
the installed `litellm` ships, found without importing it), and the calls of many
logs added up by session, day, month or model.

A call's prompt past a model's long-context tier (`..._above_200k_tokens` and the
like) is priced at that tier's rates, every part of the call, as the provider bills it.
A call served other than at the standard rates (its `Usage.served`) costs what the
table says of it, as LiteLLM prices it: at a service tier's own rates (`..._priority`,
`..._flex`: OpenAI's), else times its model's surcharge (`provider_specific_entry`:
Anthropic's `fast` mode, `us`-only inference); at the standard rates where the table
has neither for the model. The web searches the provider ran for a call cost the
table's price of a search (`search_context_cost_per_query`, its medium context's), as
LiteLLM prices Anthropic's.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from condense_cli.core.usage import Usage

TABLE = "model_prices_and_context_window_backup.json"  # in the litellm package
TIER = re.compile(r"^input_cost_per_token_above_(\d+)k_tokens$")
SERVICE = re.compile(r"^input_cost_per_token_([a-z]+)$")  # a service tier's own rates
DATE = re.compile(r"-\d{8}$|@\d{8}$")  # `claude-opus-4-5-20251101`, `...@20250514`
COLUMNS = ("calls", "input", "output", "cache_write", "cache_read", "tokens", "dollars")


@dataclass(frozen=True)
class Price:
    """Dollars per token of one model, and of its long-context tier (`above` tokens)."""

    input: float
    output: float
    cache_write: float
    cache_write_1h: float
    cache_read: float
    above: int | None = None
    tier: Price | None = None
    # what a call served so costs, times the standard rates ({"fast": 2.0, "us": 1.1})
    surcharges: dict[str, float] = field(default_factory=dict, compare=False, hash=False)
    # the rates of a call served at a service tier ({"priority": ..., "flex": ...})
    services: dict[str, Price] = field(default_factory=dict, compare=False, hash=False)
    search: float = 0.0  # dollars a web search costs (the table's medium context's)

    def rates(self, prompt: int) -> Price:
        """The rates of a call whose prompt is `prompt` tokens (its tier's past `above`)."""
        return self.tier if self.tier is not None and prompt > (self.above or 0) else self

    def of(self, call: Usage) -> float:
        """What `call` cost."""
        price = self
        for served in call.served.split():
            price = self.services.get(served, price)
        rates = price.rates(call.prompt)
        dollars = (
            call.input * rates.input
            + call.output * rates.output
            + call.cache_write * rates.cache_write
            + call.cache_write_1h * rates.cache_write_1h
            + call.cache_read * rates.cache_read
        )
        for served in call.served.split():
            dollars *= self.surcharges.get(served, 1.0)
        return dollars + call.searches * self.search


@functools.cache
def price_table() -> dict[str, Any]:
    """LiteLLM's table, as the installed package ships it ({} when it is not there)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / TABLE
    return orjson.loads(path.read_bytes()) if path.is_file() else {}


OWN: dict[str, Any] = {}  # a user's own rates (`--prices`), before LiteLLM's


def use_prices(table: dict[str, Any]) -> None:
    """Price by `table` (entries in LiteLLM's form, by model) before LiteLLM's."""
    OWN.clear()
    OWN.update(table)
    price_of.cache_clear()


@functools.cache
def price_of(model: str) -> Price | None:
    """The price of `model` as a client names it (a dated, provider-prefixed or
    `[1m]` name is looked up as the model it names), in the user's own rates first;
    None when neither has one."""
    return _looked_up(OWN, model) or _looked_up(price_table(), model)


def _looked_up(table: dict[str, Any], model: str) -> Price | None:
    entry = _entry(table, model)
    return _price(entry) if entry is not None else None


def _entry(table: dict[str, Any], model: str) -> dict[str, Any] | None:
    """The table's entry for `model` as a client names it (see `price_of`)."""
    name = model.replace("[1m]", "")
    for candidate in (name, name.rsplit("/", 1)[-1], DATE.sub("", name.rsplit("/", 1)[-1])):
        bare = (
            candidate.split(".")[-1] if candidate.startswith(("us.", "eu.", "apac.")) else candidate
        )
        for key in (candidate, bare, DATE.sub("", bare)):
            entry = table.get(key)
            if isinstance(entry, dict) and isinstance(
                entry.get("input_cost_per_token"), float | int
            ):
                return entry
    return None


LONG_CONTEXT = 1_000_000  # the window a `[1m]` model name asks for (Claude Code's)


@functools.cache
def input_limit(model: str) -> int | None:
    """The tokens `model` (as a client names it) reads at most, as LiteLLM's table has
    them (a `[1m]` name: a million); None where the table does not say."""
    if "[1m]" in model:
        return LONG_CONTEXT
    entry = _entry(price_table(), model)
    value = entry.get("max_input_tokens") if entry is not None else None
    return value if isinstance(value, int) and value > 0 else None


def _price(entry: dict[str, Any], suffix: str = "", service: str = "") -> Price:
    """The rates of `entry` (`suffix`: its long-context tier's; `service`: a service
    tier's, each rate it does not name the standard one)."""

    def rate(key: str, fallback: float = 0.0) -> float:
        for name in (key + suffix + service, key + suffix):
            value = entry.get(name)
            if isinstance(value, float | int):
                return float(value)
        return fallback

    read = rate("input_cost_per_token")
    write = rate("cache_creation_input_token_cost", read)
    tiers = [int(m.group(1)) * 1000 for key in entry if (m := TIER.match(key))]
    above = f"_above_{tiers[0] // 1000}k_tokens" if tiers and not suffix else ""
    tier = _price(entry, above, service) if above else None
    services = (
        {
            m.group(1): _price(entry, "", f"_{m.group(1)}")
            for key in entry
            if (m := SERVICE.match(key))
        }
        if not (suffix or service)
        else {}
    )
    specific = entry.get("provider_specific_entry")
    surcharges = {
        str(name): float(times)
        for name, times in (specific.items() if isinstance(specific, dict) else ())
        if isinstance(times, float | int) and not isinstance(times, bool) and times > 0
    }
    searching = entry.get("search_context_cost_per_query")
    search = searching.get("search_context_size_medium") if isinstance(searching, dict) else None
    return Price(
        read,
        rate("output_cost_per_token"),
        write,
        rate("cache_creation_input_token_cost_above_1hr", write),
        rate("cache_read_input_token_cost", read),
        tiers[0] if tiers and not suffix else None,
        tier,
        surcharges,
        services,
        float(search) if isinstance(search, float | int) and search > 0 else 0.0,
    )


@dataclass
class Spend:
    """Calls added up: their tokens, and the dollars of those with a known price."""

    calls: int = 0
    input: int = 0
    output: int = 0
    cache_write: int = 0
    cache_read: int = 0
    dollars: float = 0.0
    unpriced: set[str] = field(default_factory=set)  # models the table has no price for
    recorded: int = 0  # calls priced by the dollars the log records (none in the table)
    searches: int = 0  # web searches the calls ran (in their dollars)

    def add(self, call: Usage) -> None:
        self.calls += 1
        self.searches += call.searches
        self.input += call.input
        self.output += call.output
        self.cache_write += call.cache_write + call.cache_write_1h
        self.cache_read += call.cache_read
        price = price_of(call.model)
        if price is not None:
            self.dollars += price.of(call)
        elif call.cost is not None:  # the log's own price, where the table has none
            self.dollars += call.cost
            self.recorded += 1
        else:
            self.unpriced.add(call.model)

    @property
    def tokens(self) -> int:
        return self.input + self.output + self.cache_write + self.cache_read

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {name: getattr(self, name) for name in COLUMNS}
        row["dollars"] = round(self.dollars, 6)
        if self.unpriced:
            row["unpriced_models"] = sorted(self.unpriced)
        if self.recorded:
            row["priced_as_the_log_records"] = self.recorded
        if self.searches:
            row["web_searches"] = self.searches
        return row


SERVED_SAID = {"fast": "fast mode", "priority": "priority processing", "flex": "flex processing"}


def served_said(served: str) -> str:
    """How a call was served (`Usage.served`), in words: `fast mode, us-only inference`."""
    return ", ".join(SERVED_SAID.get(w, f"{w}-only inference") for w in served.split())


BLOCK = timedelta(hours=5)  # a billing block, as ccusage draws them


def group_key(by: str, session: str, call: Usage) -> str:
    """The row `call` of `session` adds to: the session, its UTC day, week (from its
    Monday) or month, or its model (`block` is `spend_by`'s)."""
    if by == "session":
        return session
    if by == "model":  # (served otherwise: a row of its own, at its own rates)
        return f"{call.model} ({served_said(call.served)})" if call.served else call.model
    day = call.when[:10]
    if by == "week" and day:
        monday = date.fromisoformat(day) - timedelta(days=date.fromisoformat(day).weekday())
        return monday.isoformat()
    return (day if by == "day" else call.when[:7]) or "(no date)"


def spend_by(
    by: str, calls: Iterable[tuple[str, Usage]], since: str = "", until: str = ""
) -> dict[str, Spend]:
    """The calls (each with its session) added up by `by`, those dated from `since`
    to `until` (inclusive, `YYYY-MM-DD`)."""
    chosen = [
        (session, call)
        for session, call in calls
        if not (since and call.when[:10] < since) and not (until and call.when[:10] > until)
    ]
    keys = blocks(c for _, c in chosen) if by == "block" else None
    rows: dict[str, Spend] = {}
    for index, (session, call) in enumerate(chosen):
        key = keys[index] if keys is not None else group_key(by, session, call)
        rows.setdefault(key, Spend()).add(call)
    return dict(sorted(rows.items()))


def blocks(calls: Iterable[Usage]) -> list[str]:
    """Each call's five-hour billing block, by the block's start: a block starts at the
    hour of a call that comes five hours or more after the block before it started, or
    after the call before it (the calls taken in time order)."""
    calls = list(calls)
    order = sorted(range(len(calls)), key=lambda i: calls[i].when)
    keys = [""] * len(calls)
    start = last = None
    for index in order:
        when = _moment(calls[index].when)
        if when is None:
            keys[index] = "(no date)"
            continue
        if start is None or last is None or when - start >= BLOCK or when - last >= BLOCK:
            start = when.replace(minute=0, second=0, microsecond=0)
        last = when
        keys[index] = start.strftime("%Y-%m-%dT%H:00Z")
    return keys


def _moment(stamp: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
