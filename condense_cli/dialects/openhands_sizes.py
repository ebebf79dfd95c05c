"""Where an OpenHands condenser fires, shared by V0 and V1: a condenser with a
`max_size` (the LLM summarising, amortized, attention and structured ones) condenses a
view of more events than that, or one a condensation request asked for."""

from __future__ import annotations

from typing import Any

from condense_cli.core.clientconfig import ClientConfig
from condense_cli.dialects.reports import Threshold


def max_size_of(condenser: dict[str, Any]) -> int | None:
    """The `max_size` a condenser table holds (a pipeline's: the last stage's that has
    one), or None."""
    stages = condenser.get("condensers")
    if isinstance(stages, list):
        sizes = [max_size_of(s) for s in stages if isinstance(s, dict)]
        return next((s for s in reversed(sizes) if s is not None), None)
    size = condenser.get("max_size")
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def configured_max_size(client: ClientConfig) -> tuple[int, str] | None:
    """The `max_size` of the `[condenser]` of an OpenHands `config.toml`, and how
    to say where it comes from (None: the file sets none)."""
    condenser = client.table("condenser")
    stages = condenser.get("condensers")
    for table in [condenser, *(stages if isinstance(stages, list) else [])]:
        if isinstance(table, dict):  # OpenHands refuses a max_size that is no count
            client.number(table.get("max_size"), "max_size of [condenser]")
    size = max_size_of(condenser)
    if size is None:
        return None
    kind = condenser.get("type") or condenser.get("kind") or "condenser"
    return size, f"max_size {size} of the {kind} condenser in {client.path}"


def size_threshold(size: int, max_size: int, source: str, requested: bool) -> Threshold:
    """A condensation of a view of `size` events against `max_size`: it is due at
    one more (and one over counts as at); one a request asked for is manual."""
    return Threshold("events", size, max_size + 1, source, 1, requested)
