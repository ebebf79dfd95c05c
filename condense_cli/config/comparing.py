"""The sides `simulate` and `diff` compare: one condenser for every `--config` times
every `--variant` group, each with the tokenizer of its config and a meter of what it
would send to its model."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from condense_cli.condensers.base import Condenser
from condense_cli.condensers.offline import Meter, go_offline, placeholder
from condense_cli.config.loading import (
    configured_condenser,
    configured_model,
    configured_tokenizer,
)
from condense_cli.core.events import View
from condense_cli.llm.tokens import Tokenizer


@dataclass
class Side:
    """One column of a comparison: its label, its condenser, its meter, the pins
    of its config and the [llm] model it names."""

    label: str
    condenser: Condenser
    meter: Meter
    pins: tuple[str, ...] = ()
    model: str | None = None

    def carrying(self, view: View) -> View:
        """`view` with this side's pins, as its condenser is to see it."""
        return replace(view, pins=self.pins)


def count_one(tokenizer: Tokenizer, text: str) -> int:
    """Tokens of one text (a summary the offline condensers price)."""
    return tokenizer.count_batch([text])[0]


def comparison_sides(
    configs: list[str] | None,
    type: str | None,
    sets: list[str] | None,
    variants: list[str] | None,
    call_model: bool,
    summary_tokens: int,
    notes: list[str],
) -> list[Side]:
    """A side for every config times every variant group; without `call_model`,
    summarising condensers write a placeholder of `summary_tokens` instead of
    calling their model. Configuration notes are added to `notes`."""
    sides = []
    files: list[str | None] = [*configs] if configs else [None]
    groups: list[str | None] = [*variants] if variants else [None]
    for file in files:
        tokenizer = configured_tokenizer(file)
        for group in groups:
            extra = shlex.split(group) if group else []
            configured = configured_condenser(file, type, [*(sets or []), *extra])
            condenser = configured.condenser
            notes.extend(configured.notes)
            meter = Meter(partial(count_one, tokenizer))
            if not call_model:
                go_offline(condenser, placeholder(summary_tokens), meter)
            label = Path(file).name if file else condenser.name
            name = f"{label} {group}" if group else label
            sides.append(Side(name, condenser, meter, configured.pins, configured_model(file)))
    return sides
