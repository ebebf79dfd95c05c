"""Several condensers in a row, stopping at the first condensation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from condense_cli.condensers.base import Builder, Condenser, Result, require
from condense_cli.core.events import Condensation, View


@dataclass(frozen=True)
class PipelineConfig:
    condensers: list[dict[str, Any]] = field(default_factory=list)

    def validate(self) -> None:
        require(bool(self.condensers), "condensers", "must list at least one condenser table")


class PipelineCondenser(Condenser):
    """Runs each condenser on the previous one's view."""

    name = "pipeline"
    config_class = PipelineConfig

    def __init__(self, config: PipelineConfig, stages: list[Condenser]) -> None:
        super().__init__(config)
        self.stages = stages

    @classmethod
    def from_config(cls, config: Any, llms: Any, build: Builder) -> Condenser:
        stages = [
            build(table, f"condenser.condensers[{i}]") for i, table in enumerate(config.condensers)
        ]
        return cls(config, stages)

    def describe(self) -> dict[str, Any]:
        return {"type": self.name, "condensers": [stage.describe() for stage in self.stages]}

    def condense(self, view: View) -> Result:
        notes = []
        for stage in self.stages:
            result = stage.condense(view)
            if isinstance(result, Condensation):
                return result
            if result.note:
                notes.append(f"{stage.name}: {result.note}")
            view = result.with_events(result.events)
        return view.with_note("; ".join(notes)) if notes else view
